package policytest

// Endless is a rule that never ends, in package loop: each evaluation runs
// to the deadline. It spends its time in regular expressions over one
// string, allocating a few MiB a second, so that the deadline stops it
// long before any memory bound does.
const Endless = `package loop
import rego.v1
recreate contains c.name if {
	some c in input.containers
	big := sprintf("%0100000d", [1])
	every i in numbers.range(1, 1000) {
		every j in numbers.range(1, 1000) {
			not regex.match("(0|00)+x", big)
			i + j > 0
		}
	}
}
`

// Greedy is a rule that keeps what it builds, in package greedy: a list of
// ten thousand strings of a MB (10 GB), each copied from one string in a
// single step, growing by a GB a second or more until something stops it.
// It reaches a bound of tens of MiB in a few tens of milliseconds, far
// from the default deadline even on a loaded machine (each string made
// with sprintf took four times as long).
const Greedy = `package greedy
import rego.v1
recreate contains c.name if {
	some c in input.containers
	mb := sprintf("%01040000d", [0])
	xs := [concat("", [mb, format_int(i + j, 10)]) | some i in numbers.range(1, 100); some j in numbers.range(1, 100)]
	count(xs) > 0
}
`

// HugeValue is a rule that fails for every container, in package custom:
// it yields an object with a 40 KiB string under a key recreate does not
// know, made as the rule runs, and the rule's error echoes the value.
const HugeValue = `package custom
import rego.v1
pad := concat("", [x | some i in numbers.range(1, 4096); x := "xxxxxxxxxx"])
recreate contains {"container": c.name, "pad": pad} if {
	some c in input.containers
}
`

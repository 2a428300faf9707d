package invariant

// panicked records a panic found in a Rejuv container's log.
func (c *Checker) panicked(o Panic) {
	c.violate(Panics, o.At, "pod "+o.Pod, "a Rejuv container panicked", "seen "+c.offset(o.At)+": "+o.Line)
}

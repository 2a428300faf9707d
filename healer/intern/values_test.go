package intern

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// fresh is s in memory of its own, as a decoder gives it.
func fresh(s string) string { return strings.Clone(s) }

// TestATableStartsAfreshPastItsLimit: a table never holds more than Limit
// values; what it handed out before stays as it was.
func TestATableStartsAfreshPastItsLimit(t *testing.T) {
	var table Table[string]
	first := table.Share("v0", fresh("v0"))
	for i := range Limit + 10 {
		table.Share(fmt.Sprint("v", i), fmt.Sprint("v", i))
	}
	if n := table.Len(); n > Limit {
		t.Errorf("the table holds %d values, more than its limit %d", n, Limit)
	}
	if first != "v0" {
		t.Errorf("a value handed out changed: %q", first)
	}
}

// TestKeysSharesEveryKeyAndTheValuesSaidAlike: two maps with the same keys
// hold one copy of each key and of the values alike says repeat, and
// their own copies of the others.
func TestKeysSharesEveryKeyAndTheValuesSaidAlike(t *testing.T) {
	var s Values
	alike := func(k string) bool { return k == "policy" }
	a := s.Keys(map[string]string{fresh("policy"): fresh("rolling"), fresh("pod"): fresh("web-1")}, alike)
	b := s.Keys(map[string]string{fresh("policy"): fresh("rolling"), fresh("pod"): fresh("web-1")}, alike)
	if len(a) != 2 || a["policy"] != "rolling" || a["pod"] != "web-1" {
		t.Fatalf("the map reads %v", a)
	}
	if !same(a["policy"], b["policy"]) {
		t.Error("a value said alike is held twice")
	}
	if same(a["pod"], b["pod"]) {
		t.Error("a value not said alike was shared")
	}
	for ka := range a {
		for kb := range b {
			if ka == kb && !same(ka, kb) {
				t.Errorf("key %s is held twice", ka)
			}
		}
	}
	if s.Keys(nil, alike) != nil {
		t.Error("no labels came out as a map")
	}
}

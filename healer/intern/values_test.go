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

// TestATableStartsAfreshPastItsKeyBytes: large distinct values fill a
// table's MaxKeyBytes long before its Limit; past it the table starts
// afresh, and a value larger than the whole budget is handed back, not
// kept.
func TestATableStartsAfreshPastItsKeyBytes(t *testing.T) {
	var table Table[string]
	const size = 16 << 10
	value := func(i int) string { return fmt.Sprint(i) + strings.Repeat("a", size) }
	first := table.Share(value(0), value(0))
	for i := range 3 * MaxKeyBytes / size {
		table.Share(value(i), value(i))
		if table.keyBytes > MaxKeyBytes {
			t.Fatalf("after %d values the table holds %d bytes of keys, more than %d", i+1, table.keyBytes, MaxKeyBytes)
		}
	}
	if table.Len() >= MaxKeyBytes/size || table.Len() == 0 {
		t.Errorf("the table holds %d values of %d bytes, want fewer than %d and some", table.Len(), size, MaxKeyBytes/size)
	}
	if first != value(0) {
		t.Error("a value handed out changed")
	}
	before := table.Len()
	huge := strings.Repeat("b", MaxKeyBytes+1)
	if got := table.Share(huge, huge); got != huge || table.Len() != before {
		t.Errorf("a value past the budget: handed back %v, the table went from %d values to %d", got == huge, before, table.Len())
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

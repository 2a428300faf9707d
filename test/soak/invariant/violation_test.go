package invariant

import "testing"

func TestShortID(t *testing.T) {
	cases := map[string]string{
		"containerd://0123456789abcdef": "0123456789ab",
		"docker://abc":                  "abc",
		"0123456789abcdef":              "0123456789ab",
		"":                              "-",
	}
	for id, want := range cases {
		if got := shortID(id); got != want {
			t.Errorf("shortID(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestOffsetCountsFromTheFirstObservation(t *testing.T) {
	c := NewChecker(DefaultSlack(), nil)
	c.Observe(FaultEnded{At: at(100), ID: 0})
	if got := c.offset(at(223.45)); got != "+123.5s" {
		t.Errorf("offset %q, want +123.5s", got)
	}
}

func TestViolationString(t *testing.T) {
	v := Violation{Invariant: Panics, Subject: "pod a/b", What: "a Rejuv container panicked", Evidence: []string{"one", "two"}}
	want := "[no panic] pod a/b: a Rejuv container panicked\n    one\n    two"
	if got := v.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

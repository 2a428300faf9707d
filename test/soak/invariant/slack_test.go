package invariant

import (
	"testing"
	"time"
)

func TestDefaultSlack(t *testing.T) {
	want := Slack{Skew: time.Second, Attribution: 5 * time.Second, RequestEnds: time.Minute, Held: 15 * time.Second,
		Traffic: 5 * time.Second, Component: time.Minute, DefaultDeadline: 10 * time.Minute}
	if got := DefaultSlack(); got != want {
		t.Errorf("DefaultSlack() = %+v, want %+v", got, want)
	}
}

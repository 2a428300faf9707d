package invariant

import "testing"

func TestEveryPanicIsAViolation(t *testing.T) {
	s := newSoak()
	s.tick(0)
	s.add(Panic{At: at(10), Pod: "rejuv-system/rejuv-healer-abc-1", Line: "panic: runtime error: index out of range"})
	s.add(Panic{At: at(20), Pod: "rejuv-system/rejuv-daemon-x", Line: "panic: nil map"})
	rep := s.finish(30)
	expect(t, rep, Panics, 2, "a Rejuv container panicked")
	if v := rep.Violations[0]; v.Subject != "pod rejuv-system/rejuv-healer-abc-1" || v.Evidence[0] != "seen +10.0s: panic: runtime error: index out of range" {
		t.Errorf("panic reported as %s", v)
	}
}

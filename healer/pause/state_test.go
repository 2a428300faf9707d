package pause

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func pauseMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: v1alpha1.PauseConfigMap, ResourceVersion: "7"},
		Data:       data,
	}
}

func TestThePauseSaysWhereWhyAndWhatBecomesOfRequests(t *testing.T) {
	cases := []struct {
		name string
		data map[string]string
		end  bool
		want []string
	}{
		{"no data", nil, false, []string{"paused cluster-wide by ConfigMap rejuv-system/rejuv-pause", "requests a daemon has begun finish"}},
		{"a reason", map[string]string{"reason": " INC-42: restarts storm "}, false, []string{`: "INC-42: restarts storm"`}},
		{"finish", map[string]string{"requests": "finish"}, false, []string{"begun finish"}},
		{"end", map[string]string{"requests": "end"}, true, []string{"every request not ended is ended"}},
		{"a bad value pauses the safer way", map[string]string{"requests": "stop"}, false, []string{`requests is "stop", not finish or end`, "begun finish"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Of(pauseMap(tc.data))
			if !st.Paused || st.EndRequests != tc.end || st.Version != "7" || !strings.HasPrefix(st.Message, st.Cause) || strings.Contains(st.Cause, "begun") {
				t.Fatalf("state %+v, want paused, ending requests %v, at version 7, the message the cause and what becomes of requests", st, tc.end)
			}
			for _, w := range tc.want {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q does not say %q", st.Message, w)
				}
			}
		})
	}
}

func TestNoConfigMapOrOneBeingDeletedIsNotPaused(t *testing.T) {
	if st := Of(nil); st.Paused || st.Message != "" {
		t.Errorf("no ConfigMap: %+v, want not paused", st)
	}
	deleting := pauseMap(nil)
	deleting.DeletionTimestamp = &metav1.Time{}
	if st := Of(deleting); st.Paused {
		t.Errorf("a ConfigMap being deleted: %+v, want not paused", st)
	}
}

func TestALongReasonIsQuotedCutSayingSo(t *testing.T) {
	reason := strings.Repeat("é", v1alpha1.MaxPauseReasonBytes) // two bytes each
	st := Of(pauseMap(map[string]string{"reason": reason}))
	if !strings.Contains(st.Message, "reason cut at 512 of its 1024 bytes") {
		t.Errorf("message %q does not say the reason was cut", st.Message)
	}
	if n := strings.Count(st.Message, "é"); n != v1alpha1.MaxPauseReasonBytes/2 {
		t.Errorf("quoted %d runes of the reason, want %d (512 bytes, whole runes)", n, v1alpha1.MaxPauseReasonBytes/2)
	}
}

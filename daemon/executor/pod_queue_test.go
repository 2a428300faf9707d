package executor

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestHeadIsOldestOpenRequest(t *testing.T) {
	at := func(sec int, name string, phase v1beta1.ContainerRecreateRequestPhase) *v1beta1.ContainerRecreateRequest {
		return &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(int64(sec), 0))},
			Status:     v1beta1.ContainerRecreateRequestStatus{Phase: phase},
		}
	}
	reqs := []*v1beta1.ContainerRecreateRequest{
		at(3, "c", ""), at(1, "done", v1beta1.PhaseCompleted), at(2, "b2", v1beta1.PhasePending), at(2, "b1", ""),
	}
	if h := head(reqs); h == nil || h.Name != "b1" {
		t.Fatalf("head = %v, want b1 (oldest open, name breaks the tie)", h)
	}
	if h := head([]*v1beta1.ContainerRecreateRequest{at(1, "done", v1beta1.PhaseCompleted)}); h != nil {
		t.Fatalf("head of completed requests = %s, want none", h.Name)
	}
}

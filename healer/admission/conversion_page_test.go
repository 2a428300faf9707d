package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// pageSize is the page kubectl and informers ask for.
const pageSize = 500

// TestAPageOfRequestsConvertsToV1alpha1: issue 45 said a v1alpha1 list of
// about 70 fat requests fails, its page passing the conversion webhook's
// 16 MiB in one review. That does not hold: the API server converts each
// object on its own as it reads it, and a run without the bound below
// listed a page of 80 requests of 230 KB in v1alpha1. The bound on a
// request stands for the caches that keep requests whole: a fat request is
// refused at admission, naming the field, and a page of requests at the
// bound, status included, lists in v1alpha1.
func TestAPageOfRequestsConvertsToV1alpha1(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()

	fatNS := newNamespace(t)
	createPod(t, fatNS, "web", nil)
	// About 230 KB of annotations, within the API server's 256 KiB: 80 of
	// them pass 16 MiB.
	fat := func(i int) *v1beta1.ContainerRecreateRequest {
		crr := newCRR(fatNS, fmt.Sprintf("fat-%d", i), "app")
		crr.Annotations = map[string]string{"example.com/notes": strings.Repeat("x", 230_000)}
		return crr
	}
	err := admin.Create(ctx, fat(0))
	if err == nil {
		// Today's behaviour: show what the fat requests do to a v1alpha1 list.
		for i := 1; i < 80; i++ {
			if err := admin.Create(ctx, fat(i)); err != nil {
				t.Fatalf("create fat request %d: %v", i, err)
			}
		}
		list := &v1alpha1.ContainerRecreateRequestList{}
		lerr := admin.List(ctx, list, client.InNamespace(fatNS), client.Limit(pageSize))
		t.Errorf("a request with 230 KB of annotations was admitted; 80 of them: v1alpha1 list of a page: %d items, error %v", len(list.Items), lerr)
	} else if !strings.Contains(err.Error(), "metadata.annotations") || !strings.Contains(err.Error(), fmt.Sprint(v1beta1.MaxAdmittedRequestBytes)) {
		t.Errorf("a fat request was refused with %v, want a refusal naming metadata.annotations and the bound %d", err, v1beta1.MaxAdmittedRequestBytes)
	}

	// A page of requests at the bound: each admitted as large as it may
	// be, then given a status that takes it to MaxRequestBytes (the
	// daemon's and the manager's, whose messages are short, take far
	// less). They complete, as requests that pile up do. They are spread
	// over namespaces (the webhook counts a pod's active requests among
	// its namespace's, live in this suite) and listed across them.
	const namespaces = 10
	var spaces []string
	for range namespaces {
		ns := newNamespace(t)
		createPod(t, ns, "web", nil)
		spaces = append(spaces, ns)
	}
	probe := newCRR(spaces[0], "probe", "app", "sidecar")
	if err := admin.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	padding := v1beta1.MaxAdmittedRequestBytes - jsonSize(t, admittedPart(probe)) - 200
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	var largest int
	for i := range pageSize {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			size, err := requestAtTheBound(ctx, t, spaces[i%namespaces], fmt.Sprintf("max-%03d", i), padding)
			mu.Lock()
			defer mu.Unlock()
			largest = max(largest, size)
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d requests at the bound failed, first: %v", len(errs), pageSize, errs[0])
	}
	t.Logf("%d requests, the largest %d bytes stored (bound %d)", pageSize, largest, v1beta1.MaxRequestBytes)
	if largest > v1beta1.MaxRequestBytes || largest < v1beta1.MaxRequestBytes-2048 {
		t.Fatalf("the largest request is %d bytes; the premise is requests just under %d", largest, v1beta1.MaxRequestBytes)
	}
	list := &v1alpha1.ContainerRecreateRequestList{}
	if err := admin.List(ctx, list, client.HasLabels{pageLabel}, client.Limit(pageSize)); err != nil {
		t.Fatalf("v1alpha1 list of a page of %d requests at the bound: %v", pageSize, err)
	}
	if len(list.Items) != pageSize {
		t.Errorf("v1alpha1 list of a page: %d items, want %d", len(list.Items), pageSize)
	}
}

// pageLabel marks the requests of the page.
const pageLabel = "example.com/page"

// requestAtTheBound creates a request whose admitted part is padded by
// padding bytes of annotation, gives it a completed status that takes it
// to just under v1beta1.MaxRequestBytes, and takes it out of its pod's
// active requests as the manager does. It returns the stored size.
func requestAtTheBound(ctx context.Context, t *testing.T, ns, name string, padding int) (int, error) {
	crr := newCRR(ns, name, "app", "sidecar")
	crr.Labels = map[string]string{pageLabel: ""}
	crr.Annotations = map[string]string{"example.com/notes": strings.Repeat("n", padding-len(pageLabel)-5)}
	if err := admin.Create(ctx, crr); err != nil {
		return 0, fmt.Errorf("create %s: %w", name, err)
	}
	crr.Status = v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseCompleted, Result: v1beta1.ResultSucceeded,
		ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseSucceeded}}}
	room := v1beta1.MaxRequestBytes - jsonSize(t, crr) - 600 // the status's managed fields
	crr.Status.Message = strings.Repeat("m", room)
	if err := admin.Status().Update(ctx, crr); err != nil {
		return 0, fmt.Errorf("complete %s: %w", name, err)
	}
	delete(crr.Labels, v1beta1.ActiveLabel)
	if err := admin.Update(ctx, crr); err != nil {
		return 0, fmt.Errorf("deactivate %s: %w", name, err)
	}
	return jsonSize(t, crr), nil
}

// admittedPart is what the admission bound weighs of a request.
func admittedPart(crr *v1beta1.ContainerRecreateRequest) *v1beta1.ContainerRecreateRequest {
	out := crr.DeepCopy()
	out.Status = v1beta1.ContainerRecreateRequestStatus{}
	return out
}

func jsonSize(t *testing.T, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

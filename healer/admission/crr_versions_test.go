package admission

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
)

// TestAV1alpha1CreateIsAdmittedInItsOwnVersion: the mutating webhook takes
// an OpenKruise client's v1alpha1 request as it was written, so its create
// costs only the two conversions of storage (the write as v1beta1, the
// answer back in v1alpha1), not two more around the webhook; and the
// request is admitted with all the webhook fills in.
func TestAV1alpha1CreateIsAdmittedInItsOwnVersion(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := &v1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alpha"},
		Spec:       v1alpha1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	before := conversionCalls(t)
	if err := admin.Create(ctx, crr, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if n := conversionCalls(t) - before; n != 2 {
		t.Errorf("a v1alpha1 create (dry run) made %v conversion calls, want 2 (to storage and back)", n)
	}
	c := crr.Spec.Containers[0]
	if c.StatusContext == nil || c.StatusContext.ContainerID != "containerd://app1" || crr.Labels["crr.apps.kruise.io/node-name"] != testNode || crr.Spec.Strategy == nil || crr.Spec.Strategy.FailurePolicy != v1alpha1.FailurePolicyFail {
		t.Errorf("the v1alpha1 request as admitted: %+v %+v", crr.ObjectMeta, crr.Spec)
	}
}

// conversionCalls is how many times the API server has called a
// conversion webhook for ContainerRecreateRequests.
func conversionCalls(t *testing.T) float64 {
	t.Helper()
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := kube.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("read the API server's metrics: %v", err)
	}
	var total float64
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_crd_conversion_webhook_duration_seconds_count{") || !strings.Contains(line, `crd_name="containerrecreaterequests.apps.kruise.io"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		total += v
	}
	return total
}

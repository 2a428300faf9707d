package pause

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// UnderWay is what a stop waits for: the requests not ended yet and the
// pods out of their Services through Rejuv's readiness gate, each as
// namespace/name.
type UnderWay struct {
	Requests, HeldPods []string
}

// Settled is whether nothing is under way.
func (u UnderWay) Settled() bool {
	return len(u.Requests) == 0 && len(u.HeldPods) == 0
}

// String names what is left, at most a few of each.
func (u UnderWay) String() string {
	var parts []string
	if n := len(u.Requests); n > 0 {
		parts = append(parts, fmt.Sprintf("%s under way (%s)", count(n, "request"), firstFew(u.Requests)))
	}
	if n := len(u.HeldPods); n > 0 {
		parts = append(parts, fmt.Sprintf("%s held out of their Services by the readiness gate %s (%s)", count(n, "pod"), v1beta1.PodReadyCondition, firstFew(u.HeldPods)))
	}
	if len(parts) == 0 {
		return "no request under way and no pod held"
	}
	return strings.Join(parts, "; ")
}

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// firstFew lists up to five names, saying how many more there are.
func firstFew(names []string) string {
	const few = 5
	if len(names) <= few {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
}

// ReadUnderWay lists the requests not ended, cluster-wide, and only when
// there are none the pods held: a request under way may hold its pod,
// and reading every pod of a large cluster is the dearer call. Pods are
// read pods.ListPageSize at a time, so that the reader holds one page of
// them, however large they are.
func ReadUnderWay(ctx context.Context, c client.Reader) (UnderWay, error) {
	var u UnderWay
	requests, err := listActive(ctx, c)
	if err != nil {
		return u, err
	}
	for _, r := range requests.Items {
		u.Requests = append(u.Requests, r.Namespace+"/"+r.Name)
	}
	if len(u.Requests) > 0 {
		return u, nil
	}
	list := &corev1.PodList{}
	for {
		if err := c.List(ctx, list, client.Limit(pods.ListPageSize), client.Continue(list.Continue)); err != nil {
			return u, fmt.Errorf("list the pods, to find those held out of their Services: %w", err)
		}
		for i := range list.Items {
			if pods.OutOfServiceByGate(&list.Items[i]) {
				u.HeldPods = append(u.HeldPods, list.Items[i].Namespace+"/"+list.Items[i].Name)
			}
		}
		if list.Continue == "" {
			return u, nil
		}
	}
}

// listActive lists the metadata of the requests not ended, in the first
// version of apps.kruise.io the cluster serves: beside OpenKruise, whose
// CRD serves v1alpha1 alone, v1beta1 is not.
func listActive(ctx context.Context, c client.Reader) (*metav1.PartialObjectMetadataList, error) {
	var err error
	for _, version := range []string{v1beta1.GroupVersion.Version, "v1alpha1"} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: v1beta1.GroupVersion.Group, Version: version, Kind: "ContainerRecreateRequestList"})
		if err = c.List(ctx, list, client.MatchingLabels{v1beta1.ActiveLabel: "true"}); err == nil {
			return list, nil
		}
		if !meta.IsNoMatchError(err) {
			break
		}
	}
	return nil, fmt.Errorf("list the requests under way: %w", err)
}

package install

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// transient are the resources whose objects come and go without anyone
// installing anything: events (Rejuv's among them, on pods of other
// namespaces, until the API server's event TTL).
var transient = []string{"events", "events.events.k8s.io"}

// snapshot lists every object of every resource the API server can list, by
// group, resource, namespace and name.
func snapshot(ctx context.Context, cfg *rest.Config) (map[string]bool, error) {
	cfg = rest.CopyConfig(cfg)
	// Listing deprecated resources (Endpoints, ComponentStatus) is meant.
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		return nil, fmt.Errorf("discover resources: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	objects := map[string]bool{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}.String()
			if slices.Contains(transient, gr) {
				continue
			}
			items, err := mc.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", gr, err)
			}
			for _, o := range items.Items {
				objects[gr+" "+o.Namespace+"/"+o.Name] = true
			}
		}
	}
	return objects, nil
}

// difference lists what is in a and not in b, sorted.
func difference(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// before is the cluster's objects at a moment, to find them again later.
type before struct {
	cfg     *rest.Config
	objects map[string]bool
}

// snapshotNow is the cluster's objects now. A snapshot that fails (an
// aggregated API briefly unavailable or its discovery stale) is taken
// again for up to a minute.
func snapshotNow(t *testing.T) before {
	t.Helper()
	cfg, err := cluster.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	var objects map[string]bool
	var last error
	err = wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		objects, last = snapshot(ctx, cfg)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("take a snapshot of the cluster's objects: %v (last: %v)", err, last)
	}
	return before{cfg: cfg, objects: objects}
}

// check waits for the cluster to hold those objects again (keep as for
// waitUnchanged), and fails the test, saying what is left behind and
// what is gone, when it does not; after says after what.
func (b before) check(t *testing.T, after string, keep func(string) bool) {
	t.Helper()
	if left, gone, err := waitUnchanged(context.Background(), b.cfg, b.objects, keep); err != nil {
		t.Errorf("%s the cluster differs from before: %v\nleft behind: %s\ngone: %s", after, err, strings.Join(left, ", "), strings.Join(gone, ", "))
	}
}

// waitUnchanged waits up to two minutes for the cluster to hold again the
// objects it held in before, compared by the keys keep keeps (nil keeps
// all), and says what is left behind and what is gone at the last look. A
// snapshot that fails (an API group briefly unavailable) is taken again;
// the last failure joins the timeout's error.
func waitUnchanged(ctx context.Context, cfg *rest.Config, before map[string]bool, keep func(string) bool) (left, gone []string, err error) {
	var last error
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		after, err := snapshot(ctx, cfg)
		if last = err; err != nil {
			return false, nil
		}
		left, gone = kept(difference(after, before), keep), kept(difference(before, after), keep)
		return len(left) == 0 && len(gone) == 0, nil
	})
	if err != nil && last != nil {
		err = fmt.Errorf("%w (last snapshot: %w)", err, last)
	}
	return left, gone, err
}

func kept(keys []string, keep func(string) bool) []string {
	if keep == nil {
		return keys
	}
	var out []string
	for _, k := range keys {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

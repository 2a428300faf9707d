package install

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestGetShowsPrinterColumns asks the API server for the table kubectl get
// prints.
func TestGetShowsPrinterColumns(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	if err := admin.Create(context.Background(), newCRR(ns, "table", "app", "sidecar")); err != nil {
		t.Fatal(err)
	}
	cols, cells := getTable(t, ns)
	if got, want := strings.Join(cols, " "), "Name PHASE POD NODE CONTAINERS RESULT AGE"; got != want {
		t.Errorf("columns = %q, want %q", got, want)
	}
	if cells[2] != "web" || cells[3] != testNode || cells[4] != "app,sidecar" || cells[5] != nil {
		t.Errorf("row = %v, want POD web, NODE %s, CONTAINERS app,sidecar, no RESULT yet", cells, testNode)
	}

	crr := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "table"}, crr); err != nil {
		t.Fatal(err)
	}
	crr.Status.Phase = v1beta1.PhaseCompleted
	crr.Status.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseSucceeded}}
	crr.Status.Result = v1beta1.ResultOf(crr.Status.ContainerRecreateStates)
	if err := admin.Status().Update(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	_, cells = getTable(t, ns)
	if cells[1] != "Completed" || cells[5] != "Succeeded" {
		t.Errorf("row = %v, want PHASE Completed, RESULT Succeeded", cells)
	}
}

// getTable returns the column names and the single row of the CRR table
// in ns.
func getTable(t *testing.T, ns string) ([]string, []any) {
	t.Helper()
	return getTableOf(t, "/apis/apps.kruise.io/v1beta1/namespaces/"+ns+"/containerrecreaterequests")
}

// getTableOf returns the column names and the single row of the table
// kubectl get prints for the list at path.
func getTableOf(t *testing.T, path string) ([]string, []any) {
	t.Helper()
	cfg := rest.CopyConfig(restCfg)
	cfg.GroupVersion = &v1beta1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = unstructuredSerializer()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rc.Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("get table: %v", err)
	}
	var table struct {
		ColumnDefinitions []struct{ Name string } `json:"columnDefinitions"`
		Rows              []struct{ Cells []any } `json:"rows"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows = %d, want 1", len(table.Rows))
	}
	return cols, table.Rows[0].Cells
}

// TestShortNameIsDiscoverable checks what `kubectl get crr` resolves.
func TestShortNameIsDiscoverable(t *testing.T) {
	needsAPIServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, gv := range []string{"apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"} {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discover %s: %v", gv, err)
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == "containerrecreaterequests" {
				found = true
				if strings.Join(r.ShortNames, ",") != "crr" || !r.Namespaced || strings.Join(r.Categories, ",") != "rejuv" {
					t.Errorf("%s containerrecreaterequests: shortNames %v namespaced %v categories %v, want [crr], namespaced and only in category rejuv (kubectl get rejuv), not all", gv, r.ShortNames, r.Namespaced, r.Categories)
				}
			}
		}
		if !found {
			t.Errorf("%s does not serve containerrecreaterequests", gv)
		}
	}
}

// TestExplainShowsDocumentedStrategy reads the published OpenAPI schema that
// kubectl explain prints.
func TestExplainShowsDocumentedStrategy(t *testing.T) {
	needsAPIServer(t)
	schema := publishedSchema(t, "apps.kruise.io/v1beta1", "io.kruise.apps.v1beta1.ContainerRecreateRequest")
	var crr struct {
		Properties struct {
			Spec struct {
				Properties struct {
					Strategy struct {
						Description string `json:"description"`
						Properties  map[string]struct {
							Description string `json:"description"`
						} `json:"properties"`
					} `json:"strategy"`
				} `json:"properties"`
			} `json:"spec"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &crr); err != nil {
		t.Fatal(err)
	}
	strategy := crr.Properties.Spec.Properties.Strategy
	if strategy.Description == "" {
		t.Error("spec.strategy has no description")
	}
	for _, f := range []string{"failurePolicy", "orderedRecreate", "forceRecreate", "terminationGracePeriodSeconds", "unreadyGracePeriodSeconds", "minStartedSeconds"} {
		if p, ok := strategy.Properties[f]; !ok || p.Description == "" {
			t.Errorf("spec.strategy.%s missing or undocumented in the published schema", f)
		}
	}
}

// publishedSchema returns a type's schema from the OpenAPI v3 document the
// API server publishes for group/version: what kubectl explain prints.
func publishedSchema(t *testing.T, groupVersion, name string) json.RawMessage {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	// The API server publishes a CRD's document a moment after the CRD is
	// established.
	var gv openapi.GroupVersion
	deadline := time.Now().Add(20 * time.Second)
	for gv == nil {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			t.Fatal(err)
		}
		gv = paths["apis/"+groupVersion]
		if gv == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no OpenAPI v3 document for %s", groupVersion)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schema, ok := doc.Components.Schemas[name]
	if !ok {
		t.Fatalf("the OpenAPI document of %s has no %s", groupVersion, name)
	}
	return schema
}

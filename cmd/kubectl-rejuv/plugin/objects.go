package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// objects are what policy test reads from files: policies, and the pods,
// requests and PodDisruptionBudgets to test them against.
type objects struct {
	policies []v1alpha1.RecreatePolicy
	pods     []corev1.Pod
	requests []v1beta1.ContainerRecreateRequest
	budgets  []policyv1.PodDisruptionBudget
}

// readObjects reads path: a file of YAML or JSON documents (- for
// standard input), or a directory's .yaml, .yml and .json files. A
// document is one object or a List of them; kinds other than those of
// objects are refused, naming the file and the document.
func readObjects(path string, stdin io.Reader, into *objects) error {
	if path == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		return into.decode("standard input", b)
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		files = nil
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		slices.Sort(files)
		if len(files) == 0 {
			return fmt.Errorf("%s has no .yaml, .yml or .json file", path)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := into.decode(f, b); err != nil {
			return err
		}
	}
	return nil
}

// document is one decoded YAML or JSON document.
type document = map[string]any

func (o *objects) decode(file string, b []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for n := 1; ; n++ {
		var doc document
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s, document %d: %w", file, n, err)
		}
		if doc == nil {
			continue
		}
		if err := o.add(doc); err != nil {
			return fmt.Errorf("%s, document %d: %w", file, n, err)
		}
	}
}

func (o *objects) add(doc document) error {
	raw, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	kind, _ := doc["kind"].(string)
	meta, _ := doc["metadata"].(document)
	name, _ := meta["name"].(string)
	// What a decoder says wrong with the document, after the kind and
	// name, without the JSON decoder's prefixes.
	bad := func(err error) error {
		msg := err.Error()
		if i := strings.LastIndex(msg, "json: "); i >= 0 {
			msg = msg[i+len("json: "):]
		}
		return fmt.Errorf("%s %s: %s", kind, name, msg)
	}
	switch {
	case strings.HasSuffix(kind, "List"):
		items, _ := doc["items"].([]any)
		for i, item := range items {
			m, ok := item.(document)
			if !ok {
				return fmt.Errorf("items[%d] is not an object", i)
			}
			if err := o.add(m); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	case kind == "RecreatePolicy":
		var p v1alpha1.RecreatePolicy
		if err := yaml.UnmarshalStrict(raw, &p); err != nil {
			return bad(err)
		}
		o.policies = append(o.policies, p)
	case kind == "Pod":
		var p corev1.Pod
		if err := yaml.Unmarshal(raw, &p); err != nil {
			return bad(err)
		}
		o.pods = append(o.pods, p)
	case kind == "ContainerRecreateRequest":
		var r v1beta1.ContainerRecreateRequest
		if err := yaml.Unmarshal(raw, &r); err != nil {
			return bad(err)
		}
		o.requests = append(o.requests, r)
	case kind == "PodDisruptionBudget":
		var b policyv1.PodDisruptionBudget
		if err := yaml.Unmarshal(raw, &b); err != nil {
			return bad(err)
		}
		o.budgets = append(o.budgets, b)
	case kind == "":
		return errors.New("no kind: each document is a RecreatePolicy, Pod, ContainerRecreateRequest, PodDisruptionBudget or a List of them")
	default:
		return fmt.Errorf("kind %s: each document is a RecreatePolicy, Pod, ContainerRecreateRequest, PodDisruptionBudget or a List of them", kind)
	}
	return nil
}

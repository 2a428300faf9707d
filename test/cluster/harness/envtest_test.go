package harness

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestEnvtestRunsOnHarnessBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd; run without -short (make test)")
	}
	ctx := context.Background()
	env, err := Envtest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := env.Start()
	if err != nil {
		t.Fatalf("start envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop envtest: %v", err)
		}
	})
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := DefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != cfg.KubernetesVersion {
		t.Errorf("envtest apiserver version = %s, want the harness's %s", v.GitVersion, cfg.KubernetesVersion)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "probe", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("read back ConfigMap = %+v, %v", got, err)
	}
}

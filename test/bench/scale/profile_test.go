package scale

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// profiler is a ServiceAccount allowed to get the manager's runtime
// profiles (which the benchmark's overlay turns on with --profiling), as
// an operator would set one up to explain the manager's memory.
const profiler = "rejuv-bench-profiler"

// profilerToken creates the profiler's ServiceAccount, a ClusterRole
// allowing get on /debug/pprof/* and its binding, and returns a token.
func profilerToken(ctx context.Context) (string, error) {
	kube := stack.Kube
	ns := metav1.NamespaceDefault
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: profiler, Namespace: ns}}
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create the profiler's ServiceAccount: %w", err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: profiler},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/debug/pprof/*"}, Verbs: []string{"get"}}},
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create the profiler's ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: profiler},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: profiler},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: profiler, Namespace: ns}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("bind the profiler: %w", err)
	}
	return deploy.ServiceAccountToken(ctx, kube, ns, profiler)
}

// removeProfiler deletes what profilerToken created.
func removeProfiler(ctx context.Context) error {
	kube := stack.Kube
	var errs []error
	for _, err := range []error{
		kube.RbacV1().ClusterRoleBindings().Delete(ctx, profiler, metav1.DeleteOptions{}),
		kube.RbacV1().ClusterRoles().Delete(ctx, profiler, metav1.DeleteOptions{}),
		kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Delete(ctx, profiler, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// saveHeapProfile takes the heap profile of a manager pod, after a
// garbage collection, into .cache/bench-scale/NAME, and returns the
// file's path relative to the repository.
func saveHeapProfile(ctx context.Context, pod *corev1.Pod, name string) (string, error) {
	return saveProfile(ctx, pod, "heap?gc=1", name)
}

// saveCPUProfile profiles a manager pod's CPU for 8 seconds (the scrape's
// timeout is 10) into .cache/bench-scale/NAME.
func saveCPUProfile(ctx context.Context, pod *corev1.Pod, name string) (string, error) {
	return saveProfile(ctx, pod, "profile?seconds=8", name)
}

// saveProfile saves one of a manager pod's runtime profiles (the path
// under /debug/pprof/) into .cache/bench-scale/NAME, and returns the
// file's path relative to the repository.
func saveProfile(ctx context.Context, pod *corev1.Pod, profile, name string) (string, error) {
	token, err := profilerToken(ctx)
	if err != nil {
		return "", err
	}
	code, body, err := deploy.Scrape(ctx, "https://"+pod.Status.PodIP+":8443/debug/pprof/"+profile, token)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("profile %s of %s: %d %s", profile, pod.Name, code, body)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return "", err
	}
	rel := filepath.Join(".cache", "bench-scale", name)
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return rel, os.WriteFile(path, []byte(body), 0o644)
}

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/admission"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

// forgedCRRReview is an AdmissionReview of a request for pod in another
// namespace, as the API server would send it for a cluster admin: the
// request webhook's answer patches in the pod's UID, containers' IDs and
// preStop hooks.
func forgedCRRReview(t *testing.T, pod *corev1.Pod) []byte {
	t.Helper()
	crr := &v1beta1.ContainerRecreateRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "forged"},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	object, err := json.Marshal(crr)
	if err != nil {
		t.Fatal(err)
	}
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "forged",
			Kind:      metav1.GroupVersionKind{Group: v1beta1.GroupVersion.Group, Version: "v1beta1", Kind: "ContainerRecreateRequest"},
			Resource:  metav1.GroupVersionResource{Group: v1beta1.GroupVersion.Group, Version: "v1beta1", Resource: "containerrecreaterequests"},
			Namespace: pod.Namespace, Name: "forged", Operation: admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{Username: "rejuv-harness-admin", Groups: []string{"system:masters", "system:authenticated"}},
			Object:   runtime.RawExtension{Raw: object},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return review
}

// asTheAPIServer posts review to url with the API server's webhook client
// certificate and returns the response of the review.
func asTheAPIServer(t *testing.T, url string, review []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	crt, key := cluster.Config.WebhookClientCert()
	cert, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, //nolint:gosec // the test checks the caller, not the server
	}}}
	resp, err := c.Post(url, "application/json", bytes.NewReader(review))
	if err != nil {
		t.Fatalf("post the review as the API server: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got admissionv1.AdmissionReview
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got.Response == nil {
		t.Fatalf("the review as the API server: %d %s, want a review answered", resp.StatusCode, body)
	}
	return got.Response
}

// webhookURLs are the URLs of the admission webhooks at each of hosts.
func webhookURLs(hosts ...string) []string {
	var urls []string
	for _, host := range hosts {
		for _, path := range []string{admission.MutateCRRPath, admission.ValidateCRRPath, admission.PodReadinessGatePath, admission.PolicyReadinessGatePath, admission.ValidatePolicyPath} {
			urls = append(urls, "https://"+host+path)
		}
	}
	return urls
}

// startForger has c (a tenant) start a pod in ns that posts review to
// each of urls each times, from inside the cluster, then exits.
func startForger(t *testing.T, c client.Client, ns string, urls []string, review []byte, each int) {
	t.Helper()
	args := []string{"--forge-body=" + string(review), fmt.Sprintf("--forge-count=%d", each)}
	for _, u := range urls {
		args = append(args, "--forge-url="+u)
	}
	forger := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forger"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "forger", Image: images.TestApp.Ref(), Args: args}},
		},
	}
	if err := c.Create(context.Background(), forger); err != nil {
		t.Fatalf("the tenant's forger pod: %v", err)
	}
}

// forgerAnswers waits until the forger of ns has exited and returns what
// it printed.
func forgerAnswers(t *testing.T, ns string) string {
	t.Helper()
	waitPod(t, ns, "forger", "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	logs, err := kube.CoreV1().Pods(ns).GetLogs("forger", &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(logs)
}

// checkForgedRefused: every post to each of urls was refused before it was
// read, and no answer holds the victim's UID, its container's ID or a
// patch.
func checkForgedRefused(t *testing.T, logs string, urls []string, each int, victim *corev1.Pod, containerID string) {
	t.Helper()
	if lines := strings.Split(strings.TrimSpace(logs), "\n"); len(lines) != len(urls) {
		t.Errorf("the forger printed %d answers for %d URLs, want one each (every post of a URL answered alike):\n%s", len(lines), len(urls), logs)
	}
	for _, u := range urls {
		want := fmt.Sprintf("forged %s x%d: 403 this webhook answers only the API server", u, each)
		if !strings.Contains(logs, want) {
			t.Errorf("forged reviews to %s: want %q in the forger's output:\n%s", u, want, logs)
		}
	}
	for _, leak := range []string{string(victim.UID), containerID, `"patch"`} {
		if strings.Contains(logs, leak) {
			t.Errorf("the forger's answers hold %q:\n%s", leak, logs)
		}
	}
}

// TestForgedReviewsAreRefused: a tenant's pod sends AdmissionReviews to
// every admission webhook, through their Service and to each manager
// replica, forged as the API server's for a pod of another namespace.
// Each is refused before it is read (403), while the same review with the
// API server's webhook client certificate would have been answered with
// that pod's UID and container IDs; requests through the API server are
// still admitted.
func TestForgedReviewsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	victim := labelledPod(t, "victim")
	review := forgedCRRReview(t, victim)
	containerID := containerStatus(victim, "app").ContainerID

	managers, err := rejuvStack(t).Pods(ctx, deploy.HealerSelector)
	if err != nil || len(managers) == 0 {
		t.Fatalf("the manager's pods: %v (%d)", err, len(managers))
	}
	service, err := kube.CoreV1().Services(deploy.Namespace).Get(ctx, deploy.WebhookService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Premise: the review, from the API server, discloses the pod.
	answer := asTheAPIServer(t, fmt.Sprintf("https://%s:9443%s", managers[0].Status.PodIP, admission.MutateCRRPath), review)
	if patch := string(answer.Patch); !answer.Allowed || !strings.Contains(patch, string(victim.UID)) || !strings.Contains(patch, containerID) {
		t.Fatalf("premise: the review as the API server was answered %v %v with patch %s, want the pod's UID %s and container ID %s in it",
			answer.Allowed, answer.Result, patch, victim.UID, containerID)
	}

	tenant := newNamespace(t)
	editIn(t, tenant, "tenant-forger")
	hosts := []string{service.Spec.ClusterIP + ":443"}
	for _, m := range managers {
		hosts = append(hosts, m.Status.PodIP+":9443")
	}
	urls := webhookURLs(hosts...)
	const each = 20
	startForger(t, impersonate(t, "tenant-forger", nil, ""), tenant, urls, review, each)
	logs := forgerAnswers(t, tenant)
	checkForgedRefused(t, logs, urls, each, victim, containerID)
	t.Logf("%d forged reviews from a tenant's pod to %d URLs refused; the API server's certificate is answered", each*len(urls), len(urls))

	// Through the API server, requests are still admitted and patched.
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: victim.Namespace, Name: "through-the-api-server"},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: victim.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	if err := rejuvStack(t).Client.Create(ctx, crr); err != nil {
		t.Fatalf("a request through the API server: %v", err)
	}
	if got := crr.Labels[v1beta1.PodUIDLabel]; got != string(victim.UID) {
		t.Errorf("a request through the API server: pod UID label %q, want %s (patched by the request webhook)", got, victim.UID)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestARequestOnTheSecondNodeIsItsDaemonsAlone: a request for a pod on the
// second node is executed by that node's daemon, through that node's
// runtime (the container it stopped is there, and not in the first
// node's), and the first node's daemon never touches it.
func TestARequestOnTheSecondNodeIsItsDaemonsAlone(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	second, first := secondNode(t), cluster.Nodes()[0]
	ns := newNamespace(t)
	before := createPod(t, ns, onNode(testappPod("second"), second.Name))
	old := containerStatus(before, "app")
	crr := newRequest(ns, "second", before.Name, "app")
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	got, _ := waitCompleted(t, s.Client, crr, 90*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %s %+v", got.Status.Result, got.Status.Message, got.Status.ContainerRecreateStates)
	}
	after := waitPod(t, ns, before.Name, "Ready with a new container", func(p *corev1.Pod) bool {
		return podReady(true)(p) && containerStatus(p, "app").ContainerID != old.ContainerID
	})
	if n := containerStatus(after, "app").RestartCount - old.RestartCount; n != 1 {
		t.Errorf("%d restarts, want 1", n)
	}
	_, id, _ := strings.Cut(old.ContainerID, "://")
	st, err := runtimeOf(t, second.Name).ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Errorf("the second node's runtime has the old container %s as %v (%v), want exited", id, st.GetStatus().GetState(), err)
	}
	if _, err := runtimeOf(t, first.Name).ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id}); status.Code(err) != codes.NotFound {
		t.Errorf("the first node's runtime answers for the second node's container %s: %v, want NotFound", id, err)
	}
	key := ns + "/" + crr.Name
	for _, n := range []string{first.Name, second.Name} {
		daemon, err := s.DaemonPod(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		lines := requestLog(podLog(t, daemon.Name, false), key)
		switch stopped := strings.Contains(lines, `"msg":"stopped container"`); {
		case n == second.Name && !stopped:
			t.Errorf("the daemon of %s (%s) did not log the stop of %s:\n%s", n, daemon.Name, key, lines)
		case n == first.Name && lines != "":
			t.Errorf("the daemon of %s (%s) acted on %s, a request of %s:\n%s", n, daemon.Name, key, second.Name, lines)
		}
	}
}

// TestADaemonCannotWriteTheStatusOfAnotherNodesRequest: the first node's
// daemon, with the very token its kubelet mounted in its pod, may write
// requests' status (its role), but the daemon-scope admission policy
// refuses it the status of a request of the second node.
func TestADaemonCannotWriteTheStatusOfAnotherNodesRequest(t *testing.T) {
	t.Parallel()
	s := rejuvStack(t)
	ctx := context.Background()
	second, first := secondNode(t), cluster.Nodes()[0]
	daemon, err := s.DaemonPod(ctx, first.Name)
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ := filepath.Glob(filepath.Join(first.PodDir(string(daemon.UID)), "volumes", "kubernetes.io~projected", "*", "token"))
	if len(tokens) != 1 {
		t.Fatalf("premise: %d service account tokens mounted in the daemon pod %s, want 1", len(tokens), daemon.Name)
	}
	token, err := os.ReadFile(tokens[0])
	if err != nil {
		t.Fatal(err)
	}
	admin, err := cluster.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	asDaemon := rest.AnonymousClientConfig(admin)
	asDaemon.BearerToken = string(token)
	daemonKube, err := kubernetes.NewForConfig(asDaemon)
	if err != nil {
		t.Fatal(err)
	}
	// The premise: the token is the daemon's, bound to the first node,
	// and its role lets it write requests' status.
	who, err := daemonKube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user := who.Status.UserInfo
	if want := "system:serviceaccount:" + deploy.Namespace + ":" + daemon.Spec.ServiceAccountName; user.Username != want ||
		len(user.Extra["authentication.kubernetes.io/node-name"]) != 1 || user.Extra["authentication.kubernetes.io/node-name"][0] != first.Name {
		t.Fatalf("premise: the token is %s with %v, want %s bound to node %s", user.Username, user.Extra, want, first.Name)
	}
	ns := newNamespace(t)
	pod := createPod(t, ns, onNode(testappPod("elsewhere"), second.Name))
	review, err := daemonKube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "update", Group: v1beta1.GroupVersion.Group, Resource: "containerrecreaterequests", Subresource: "status"},
	}}, metav1.CreateOptions{})
	if err != nil || !review.Status.Allowed {
		t.Fatalf("premise: the daemon's role does not let it update requests' status in %s: %+v %v", ns, review.Status, err)
	}
	crr := newRequest(ns, "elsewhere", pod.Name, "app")
	if err := s.Client.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"message": "written by the daemon of " + first.Name}})
	if err != nil {
		t.Fatal(err)
	}
	asDaemonClient, err := client.New(asDaemon, client.Options{Scheme: s.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	err = asDaemonClient.Status().Patch(ctx, crr.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
	want := fmt.Sprintf("from node %s may not update the status of ContainerRecreateRequest %s/%s, which belongs to node %s", first.Name, ns, crr.Name, second.Name)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the first node's daemon wrote the status of the second node's request: %v; want refused, saying %q", err, want)
	}
	cur := &v1beta1.ContainerRecreateRequest{}
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: crr.Name}, cur); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cur.Status.Message, "written by the daemon of") {
		t.Errorf("the request's status says %q", cur.Status.Message)
	}
}

// TestDaemonRollingUpdateGoesOneNodeAtATime changes the DaemonSet's pod
// template while the first node's daemon stops a container that ignores
// SIGTERM for 45 s: the rolling update replaces one node's daemon at a
// time (never both nodes without a ready daemon), the second node's while
// the first node's request is still in flight, and the request, whose
// daemon is replaced too, ends Succeeded with the container restarted
// exactly once. Not parallel: every test needs the daemons.
func TestDaemonRollingUpdateGoesOneNodeAtATime(t *testing.T) {
	disturbs(t)
	s := rejuvStack(t)
	ctx := context.Background()
	second, first := secondNode(t), cluster.Nodes()[0]
	crr, pod, before, daemon := stubbornRequest(t, "rolled-daemon", first.Name, 45)
	old := map[string]types.UID{first.Name: daemon.UID}
	if d, err := s.DaemonPod(ctx, second.Name); err != nil {
		t.Fatal(err)
	} else {
		old[second.Name] = d.UID
	}

	// Sample, every 200 ms, how many nodes lack a ready daemon, and
	// whether the request was still in flight when the second node's went
	// (read once stopSampling has returned).
	// worst says the daemon pods of the sample with the most nodes without
	// one ready, as listed (a terminating pod counts as gone).
	mostWithout, inFlightWhenSecondWent, secondWent, worst := 0, false, false, ""
	stopSampling := every(200*time.Millisecond, func() {
		list, err := s.Kube.CoreV1().Pods(deploy.Namespace).List(ctx, metav1.ListOptions{LabelSelector: deploy.DaemonSelector})
		if err != nil {
			return
		}
		ready := map[string]bool{}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && podReady(true)(&p) {
				ready[p.Spec.NodeName] = true
			}
		}
		cur := &v1beta1.ContainerRecreateRequest{}
		inFlight := s.Client.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: crr.Name}, cur) == nil && cur.Status.Phase != v1beta1.PhaseCompleted
		without := 0
		for _, n := range []string{first.Name, second.Name} {
			if !ready[n] {
				without++
			}
		}
		if without > mostWithout {
			mostWithout, worst = without, describeDaemons(list.Items)
		}
		if !ready[second.Name] && !secondWent {
			secondWent, inFlightWhenSecondWent = true, inFlight
		}
	})
	defer stopSampling()
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{"rejuv.dev/e2e-rollout": time.Now().Format(time.RFC3339Nano)},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Kube.AppsV1().DaemonSets(deploy.Namespace).Patch(ctx, deploy.DaemonSet, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both daemons replaced and ready", func() bool {
		for _, n := range []string{first.Name, second.Name} {
			d, err := s.DaemonPod(ctx, n)
			if err != nil || d.UID == old[n] || d.Annotations["rejuv.dev/e2e-rollout"] == "" || !podReady(true)(d) {
				return false
			}
		}
		return true
	})
	stopSampling()
	t.Logf("at most %d of 2 nodes without a ready daemon (%s); the request in flight when the second node's daemon went: %t", mostWithout, worst, inFlightWhenSecondWent)
	if mostWithout > 1 {
		t.Errorf("%d nodes were without a ready daemon at once: the rolling update did not go one node at a time", mostWithout)
	}
	if !secondWent || !inFlightWhenSecondWent {
		t.Errorf("premise: the second node's daemon was replaced (%t) while the first node's request was in flight (%t)", secondWent, inFlightWhenSecondWent)
	}
	recreatedOnce(t, crr, pod, before)
}

// describeDaemons says each daemon pod's node, whether it is terminating,
// its resource version and its status (describeStatus).
func describeDaemons(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s on %s (terminating %t, resourceVersion %s): %s",
			p.Name, p.Spec.NodeName, p.DeletionTimestamp != nil, p.ResourceVersion, describeStatus(&p)))
	}
	return strings.Join(out, "; ")
}

package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// backOffRounds is how many times one container is recreated in a row.
const backOffRounds = 5

// BenchmarkRecreateBackOff recreates one container backOffRounds times in
// a row, each request created as soon as the previous completed, and
// prints how long each took and whether the request said the kubelet held
// the restart in its back-off: the kubelet's crash-loop back-off applies
// to a container restarted again within 10 minutes, whoever stopped it.
//
//	go test -run '^$' -bench BenchmarkRecreateBackOff -benchtime 1x -timeout 30m ./test/bench
func BenchmarkRecreateBackOff(b *testing.B) {
	ctx := context.Background()
	t := createPods(b, newNamespace(b), "backoff", 1, 1)[0]
	b.ResetTimer()
	for range b.N {
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Printf("\nOne container recreated %d times in a row (each request created when the previous completed)\n", backOffRounds)
		fmt.Fprintln(w, "recreation\ttook\tthe request said\t")
		for i := range backOffRounds {
			crr := &v1beta1.ContainerRecreateRequest{
				ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: fmt.Sprintf("again-%d-%d", b.N, i)},
				Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: t.container}}},
			}
			start := time.Now()
			if err := stack.Client.Create(ctx, crr); err != nil {
				b.Fatal(err)
			}
			said := "-"
			err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
				cur := &v1beta1.ContainerRecreateRequest{}
				if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
					return false, nil
				}
				for _, s := range cur.Status.ContainerRecreateStates {
					if msg, ok := strings.CutPrefix(s.Message, v1beta1.BackOffMessage); ok {
						said = "back-off: " + msg
					}
				}
				if cur.Status.Phase != v1beta1.PhaseCompleted {
					return false, nil
				}
				if cur.Status.Result != v1beta1.ResultSucceeded {
					return false, fmt.Errorf("request %s ended %s: %+v", crr.Name, cur.Status.Result, cur.Status.ContainerRecreateStates)
				}
				return true, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t\n", i+1, time.Since(start).Round(100*time.Millisecond), said)
		}
		_ = w.Flush()
	}
}

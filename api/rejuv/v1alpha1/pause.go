package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
)

// The emergency stop. While a ConfigMap named PauseConfigMap exists in the
// manager's namespace, Rejuv recreates nothing new anywhere in the
// cluster: no policy creates a request (each one's decisions say Paused,
// its Ready condition is False with reason Paused), the request webhook
// refuses every new request, and the request controller ends every
// request no daemon has begun. Requests a daemon has begun go on to
// their end, or are ended too when the ConfigMap's PauseRequestsKey is
// PauseEnd. Deleting the ConfigMap resumes. `kubectl rejuv pause --all`
// and `kubectl rejuv resume --all` write and delete it.
const (
	// PauseConfigMap names the ConfigMap whose presence pauses Rejuv.
	PauseConfigMap = "rejuv-pause"
	// PauseReasonKey holds why Rejuv was paused, quoted in every policy's
	// status and in every refusal; at most MaxPauseReasonBytes.
	PauseReasonKey = "reason"
	// PauseRequestsKey says what becomes of the requests a daemon has
	// begun: PauseFinish (the default) or PauseEnd.
	PauseRequestsKey = "requests"
	// PauseFinish lets a request a daemon has begun go on to its end.
	PauseFinish = "finish"
	// PauseEnd ends every request not ended yet, begun or not; the pods
	// they hold out of service are put back.
	PauseEnd = "end"
	// PauseObservedAnnotation is set by the manager's leader on the
	// ConfigMap to the PauseDigest of the data it acts on: once it
	// matches the data, its controllers hold every policy and end the
	// requests the pause ends.
	PauseObservedAnnotation = "rejuv.dev/pause-observed"
	// MaxPauseReasonBytes bounds the reason: longer is refused by the
	// plugin, and quoted cut, saying so, by the manager.
	MaxPauseReasonBytes = 512
	// PausedMessage begins the message of every request the manager ends
	// for a pause, and of every refusal: a policy tells by it a request
	// of its own that was withdrawn before anything was stopped.
	PausedMessage = "Rejuv is paused cluster-wide"
)

// PauseDigest is what the manager writes to PauseObservedAnnotation once it
// acts on a pause's data: a digest of its keys and values, so that a
// client that wrote data knows when the manager has seen that data.
func PauseDigest(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(data[k]), data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

package daemon

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/utils/clock"
)

// metricsAllowTTL is how long an allowed token is trusted without asking
// the API server again; controller-runtime's filter caches a token review
// for as long.
const metricsAllowTTL = time.Minute

// metricsDenyTTL is how long a refused token (401 or 403) is refused
// without asking the API server again: whoever sends the same bad token
// over and over costs one review per period, not one per request.
const metricsDenyTTL = 10 * time.Second

// metricsMaxReviews bounds the reviews under way at once: the API server's
// flow for them is shared by every daemon. A request past it is answered
// 429 without a review.
const metricsMaxReviews = 4

// metricsRememberedMax bounds the decisions remembered; past it the one
// closest to expiring is forgotten.
const metricsRememberedMax = 1024

// metricsMaxAuthorization bounds the Authorization header's size: a
// service account token is about 1 KiB. A larger header is answered 431
// without a review.
const metricsMaxAuthorization = 8 << 10

// metricsReviewTimeout bounds the token and access reviews of one request.
const metricsReviewTimeout = 10 * time.Second

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// reviewer asks the API server about a token and a user's access.
type reviewer interface {
	ReviewToken(ctx context.Context, tr *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error)
	ReviewAccess(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error)
}

// metricsAuth is the daemon's metrics filter: a request needs a bearer
// token the API server authenticates (TokenReview) for a user it lets get
// the path (SubjectAccessReview), as with controller-runtime's
// filters.WithAuthenticationAndAuthorization, without linking
// k8s.io/apiserver, whose packages cost the daemon about 7 MiB of resident
// memory.
type metricsAuth struct {
	api   reviewer
	clock clock.PassiveClock

	// reviews holds a slot per review under way.
	reviews chan struct{}
	once    sync.Once

	mu sync.Mutex
	// decisions maps a hash of token, verb and path to the status answered
	// and when it expires; server errors are not remembered.
	decisions map[[sha256.Size]byte]decision
}

// decision is a remembered answer to a token for a verb and path.
type decision struct {
	code  int
	until time.Time
}

func (a *metricsAuth) filter(log logr.Logger, next http.Handler) http.Handler {
	a.once.Do(func() { a.reviews = make(chan struct{}, metricsMaxReviews) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		if len(header) > metricsMaxAuthorization {
			http.Error(w, fmt.Sprintf("the Authorization header has %d bytes, at most %d bytes are accepted", len(header), metricsMaxAuthorization), http.StatusRequestHeaderFieldsTooLarge)
			return
		}
		token, ok := strings.CutPrefix(header, "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		key := sha256.Sum256([]byte(verb + " " + r.URL.Path + " " + token))
		code, known := a.remembered(key)
		if !known {
			select {
			case a.reviews <- struct{}{}:
			default:
				w.Header().Set("Retry-After", "1")
				http.Error(w, fmt.Sprintf("too many metrics requests under review: at most %d token reviews run at once", metricsMaxReviews), http.StatusTooManyRequests)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), metricsReviewTimeout)
			var err error
			code, err = a.review(ctx, strings.TrimSpace(token), verb, r.URL.Path)
			cancel()
			<-a.reviews
			if err != nil {
				log.Error(err, "metrics request not authorized", "path", r.URL.Path)
			} else {
				a.remember(key, code)
			}
		}
		if code != http.StatusOK {
			http.Error(w, http.StatusText(code), code)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// review asks the API server who the token is and whether that user may
// use verb on path; it returns the HTTP status to answer with.
func (a *metricsAuth) review(ctx context.Context, token, verb, path string) (int, error) {
	tr, err := a.api.ReviewToken(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}})
	if err != nil {
		return http.StatusInternalServerError, fmt.Errorf("review the token: %w", err)
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.api.ReviewAccess(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}})
	if err != nil {
		return http.StatusInternalServerError, fmt.Errorf("ask whether %s may %s %s: %w", user.Username, verb, path, err)
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

// remembered returns the status remembered for key, if it has not expired.
func (a *metricsAuth) remembered(key [sha256.Size]byte) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, ok := a.decisions[key]
	if !ok || !a.clock.Now().Before(d.until) {
		return 0, false
	}
	return d.code, true
}

// remember keeps the status answered for key: an allow for
// metricsAllowTTL, a refusal for metricsDenyTTL. Expired decisions are
// dropped first; past metricsRememberedMax, the one closest to expiring.
func (a *metricsAuth) remember(key [sha256.Size]byte, code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	if a.decisions == nil {
		a.decisions = map[[sha256.Size]byte]decision{}
	}
	for k, d := range a.decisions {
		if !now.Before(d.until) {
			delete(a.decisions, k)
		}
	}
	if _, ok := a.decisions[key]; !ok && len(a.decisions) >= metricsRememberedMax {
		var soonest [sha256.Size]byte
		var first time.Time
		for k, d := range a.decisions {
			if first.IsZero() || d.until.Before(first) {
				soonest, first = k, d.until
			}
		}
		delete(a.decisions, soonest)
	}
	ttl := metricsDenyTTL
	if code == http.StatusOK {
		ttl = metricsAllowTTL
	}
	a.decisions[key] = decision{code: code, until: now.Add(ttl)}
}

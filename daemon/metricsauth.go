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

	mu sync.Mutex
	// allowed maps a hash of token, verb and path to when the decision
	// expires; only allows are remembered.
	allowed map[[sha256.Size]byte]time.Time
}

func (a *metricsAuth) filter(log logr.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(token) == "" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		verb := strings.ToLower(r.Method)
		key := sha256.Sum256([]byte(verb + " " + r.URL.Path + " " + token))
		if a.remembered(key) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), metricsReviewTimeout)
		defer cancel()
		code, err := a.review(ctx, strings.TrimSpace(token), verb, r.URL.Path)
		if err != nil {
			log.Error(err, "metrics request not authorized", "path", r.URL.Path)
		}
		if code != http.StatusOK {
			http.Error(w, http.StatusText(code), code)
			return
		}
		a.remember(key)
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

func (a *metricsAuth) remembered(key [sha256.Size]byte) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	until, ok := a.allowed[key]
	return ok && a.clock.Now().Before(until)
}

func (a *metricsAuth) remember(key [sha256.Size]byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	if a.allowed == nil {
		a.allowed = map[[sha256.Size]byte]time.Time{}
	}
	for k, until := range a.allowed {
		if !now.Before(until) {
			delete(a.allowed, k)
		}
	}
	a.allowed[key] = now.Add(metricsAllowTTL)
}

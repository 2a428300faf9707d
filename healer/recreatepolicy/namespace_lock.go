package recreatepolicy

import "sync"

// namespaceLocks serialize the decisions of the policies of one namespace:
// with several workers, two policies selecting the same pods would
// otherwise each count the budgets without the requests the other is
// creating. Rules are evaluated outside the lock; only the pass from
// reading the requests to creating new ones holds it. An entry lives while
// someone holds or waits for it.
type namespaceLocks struct {
	mu    sync.Mutex
	locks map[string]*namespaceLock
}

type namespaceLock struct {
	sync.Mutex
	users int
}

// lock takes the namespace's lock and returns its release, which may be
// called more than once.
func (l *namespaceLocks) lock(namespace string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*namespaceLock{}
	}
	nl := l.locks[namespace]
	if nl == nil {
		nl = &namespaceLock{}
		l.locks[namespace] = nl
	}
	nl.users++
	l.mu.Unlock()
	nl.Lock()
	return sync.OnceFunc(func() {
		nl.Unlock()
		l.mu.Lock()
		if nl.users--; nl.users == 0 {
			delete(l.locks, namespace)
		}
		l.mu.Unlock()
	})
}

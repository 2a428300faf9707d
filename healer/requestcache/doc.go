// Package requestcache keeps the ContainerRecreateRequests of the cluster
// in the manager's cache with the values they hold alike kept once: the
// keys of their labels and annotations, their policy, trigger, run and
// reason, their owner, strategy and preStop hooks, their containers' and
// conditions' names. A rolling restart of ten thousand pods leaves ten
// thousand requests in the cache until they expire (an hour by default).
// Nothing is left out: a request reads back as the API server gave it,
// but for its managedFields, which nothing in Rejuv reads.
package requestcache

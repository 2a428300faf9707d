package heap

import "runtime"

// Live is the live heap: what the heap holds after two collections (the
// second frees what finalizers of the first kept).
func Live() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

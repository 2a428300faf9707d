package intern

import (
	"encoding/binary"
	"sync"
)

// Limit bounds how many values each table holds, MaxKeyBytes the bytes
// of their keys: past either a table starts afresh (the values handed out
// stay valid; only later objects share less). A key is the value's
// encoding, about its size, so MaxKeyBytes bounds what a table keeps
// alive of objects long gone: pods deleted, or whose annotations changed,
// each with up to 16 KiB of distinct annotations, would otherwise keep
// Limit of them (about 640 MiB of keys and maps).
const (
	Limit       = 20_000
	MaxKeyBytes = 2 << 20
)

// Table hands out one value per key.
type Table[V any] struct {
	mu     sync.Mutex
	values map[string]V
	// keyBytes is the length of the keys held.
	keyBytes int
}

// Share returns the value kept for key, keeping v for it when there is
// none.
func (t *Table[V]) Share(key string, v V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept, ok := t.values[key]; ok {
		return kept
	}
	if len(key) > MaxKeyBytes {
		// A value bigger than the table is not shared.
		return v
	}
	if t.values == nil || len(t.values) >= Limit || t.keyBytes+len(key) > MaxKeyBytes {
		t.values, t.keyBytes = map[string]V{}, 0
	}
	t.values[key] = v
	t.keyBytes += len(key)
	return v
}

// Len is how many values the table holds.
func (t *Table[V]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.values)
}

// AppendPart appends a part of a key, its length first, so that no two
// lists of parts make the same key.
func AppendPart(key []byte, part string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(part))), part...)
}

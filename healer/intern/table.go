package intern

import (
	"encoding/binary"
	"sync"
)

// Limit bounds each table: past it a table starts afresh (the values
// handed out stay valid; only later objects share less).
const Limit = 20_000

// Table hands out one value per key.
type Table[V any] struct {
	mu     sync.Mutex
	values map[string]V
}

// Share returns the value kept for key, keeping v for it when there is
// none.
func (t *Table[V]) Share(key string, v V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept, ok := t.values[key]; ok {
		return kept
	}
	if t.values == nil || len(t.values) >= Limit {
		t.values = map[string]V{}
	}
	t.values[key] = v
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

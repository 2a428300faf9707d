package podcache

import (
	"encoding/hex"
	"strings"
)

// packedID is a container ID as the runtimes write it, "<runtime>://"
// and 64 lowercase hex digits (containerd's and CRI-O's, 77 bytes and a
// string's 16 more a container), kept as the runtime's part, shared, and
// the 32 bytes the digits stand for. Any other ID is kept whole in
// prefix, with whole set.
type packedID struct {
	prefix string
	digits [32]byte
	whole  bool
}

// packID packs id, its runtime's part shared through s.
func (s *sharedValues) packID(id string) packedID {
	scheme, digits, ok := strings.Cut(id, "://")
	if !ok || len(digits) != 64 || strings.ToLower(digits) != digits {
		return packedID{prefix: id, whole: true}
	}
	var p packedID
	if _, err := hex.Decode(p.digits[:], []byte(digits)); err != nil {
		return packedID{prefix: id, whole: true}
	}
	p.prefix = s.String(scheme + "://")
	return p
}

// String is the container ID packed.
func (p *packedID) String() string {
	if p.whole {
		return p.prefix
	}
	var b strings.Builder
	b.Grow(len(p.prefix) + 64)
	b.WriteString(p.prefix)
	var digits [64]byte
	hex.Encode(digits[:], p.digits[:])
	b.Write(digits[:])
	return b.String()
}

package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
)

// Signer computes and checks the HMAC-SHA256 signature of messages. A Signer with an
// empty key signs nothing and accepts everything, as the protocol specifies. It is safe
// for concurrent use.
type Signer struct {
	key  []byte
	pool sync.Pool
}

// NewSigner returns a Signer for key, the "key" field of a connection file.
func NewSigner(key string) *Signer {
	s := &Signer{key: []byte(key)}
	s.pool.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// Enabled reports whether messages are signed (the key is not empty).
func (s *Signer) Enabled() bool { return len(s.key) > 0 }

// mac returns the raw HMAC of the four signed frames.
func (s *Signer) mac(header, parent, metadata, content []byte) []byte {
	h := s.pool.Get().(hash.Hash)
	h.Reset()
	h.Write(header)
	h.Write(parent)
	h.Write(metadata)
	h.Write(content)
	sum := h.Sum(nil)
	s.pool.Put(h)
	return sum
}

// Sign returns the hex signature of a message's header, parent header, metadata and
// content frames, or an empty slice when signing is disabled.
func (s *Signer) Sign(header, parent, metadata, content []byte) []byte {
	if !s.Enabled() {
		return []byte{}
	}
	sum := s.mac(header, parent, metadata, content)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// Verify reports whether sig is the correct hex signature of the four frames, comparing
// in constant time. With signing disabled every signature is accepted.
func (s *Signer) Verify(sig, header, parent, metadata, content []byte) bool {
	if !s.Enabled() {
		return true
	}
	got := make([]byte, hex.DecodedLen(len(sig)))
	if _, err := hex.Decode(got, sig); err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, s.mac(header, parent, metadata, content))
}

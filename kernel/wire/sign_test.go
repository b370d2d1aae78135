package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

// signedFrames is a signed execute_request with metadata, identities and a buffer, and
// the index of its delimiter.
func signedFrames(t *testing.T, s *Signer) ([][]byte, int) {
	t.Helper()
	m, err := NewMessage("execute_request", "sess", "user", ExecuteRequest{Code: "1+1"})
	if err != nil {
		t.Fatal(err)
	}
	m.Identities = [][]byte{[]byte("client-id")}
	m.Metadata = map[string]any{"cellId": "c1"}
	m.Buffers = [][]byte{[]byte("buffer")}
	frames, err := m.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	return frames, len(m.Identities)
}

// The signature is HMAC-SHA256 over header, parent header, metadata and content, in that
// order and nothing else (the protocol's definition), computed here independently.
func TestSignatureKnownAnswer(t *testing.T) {
	s := NewSigner("secret")
	frames, d := signedFrames(t, s)
	h := hmac.New(sha256.New, []byte("secret"))
	for _, f := range frames[d+2 : d+6] {
		h.Write(f)
	}
	if want := hex.EncodeToString(h.Sum(nil)); string(frames[d+1]) != want {
		t.Fatalf("signature %s, want HMAC-SHA256 of the four frames %s", frames[d+1], want)
	}
}

// Every signed frame, tampered with one at a time, fails verification; the frames the
// protocol leaves unsigned (identities, buffers) do not.
func TestEveryFrameTampered(t *testing.T) {
	s := NewSigner("secret")
	frames, d := signedFrames(t, s)
	if _, err := Decode(frames, s); err != nil {
		t.Fatalf("untampered message rejected: %v", err)
	}
	for i, name := range []string{"signature", "header", "parent header", "metadata", "content"} {
		for _, change := range []struct {
			how string
			to  func([]byte) []byte
		}{
			{"one byte changed", func(b []byte) []byte {
				c := append([]byte(nil), b...)
				if len(c) == 0 {
					return []byte("x")
				}
				c[len(c)/2] ^= 1
				return c
			}},
			{"replaced by {}", func([]byte) []byte { return []byte("{}") }},
			{"emptied", func([]byte) []byte { return []byte{} }},
		} {
			f := append([][]byte(nil), frames...)
			at := d + 1 + i
			f[at] = change.to(f[at])
			if string(f[at]) == string(frames[at]) {
				continue // this change leaves this frame as it was (an empty parent header)
			}
			t.Run(name+"/"+change.how, func(t *testing.T) {
				if s.Verify(f[d+1], f[d+2], f[d+3], f[d+4], f[d+5]) {
					t.Errorf("Verify accepted the message with its %s %s", name, change.how)
				}
				if _, err := Decode(f, s); !errors.Is(err, ErrSignature) {
					t.Errorf("Decode with the %s %s: %v, want ErrSignature", name, change.how, err)
				}
			})
		}
	}
	// Frames moved between places (header and metadata swapped) fail too: the order
	// is part of what is signed.
	f := append([][]byte(nil), frames...)
	f[d+2], f[d+4] = f[d+4], f[d+2]
	if s.Verify(f[d+1], f[d+2], f[d+3], f[d+4], f[d+5]) {
		t.Error("Verify accepted header and metadata swapped")
	}
	for _, at := range []int{0, len(frames) - 1} { // identity, buffer
		f := append([][]byte(nil), frames...)
		f[at] = []byte("changed")
		if _, err := Decode(f, s); err != nil {
			t.Errorf("changing unsigned frame %d: %v", at, err)
		}
	}
}

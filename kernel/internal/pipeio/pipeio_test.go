package pipeio

import (
	"os"
	"testing"
	"unicode/utf8"
)

// TestCompleteUTF8Splits cuts valid text at every byte and checks that the prefix kept
// ends at the start of the character the cut falls in.
func TestCompleteUTF8Splits(t *testing.T) {
	for _, s := range []string{
		"",
		"plain ascii",
		"é",       // 2 bytes
		"€",       // 3 bytes
		"𝄞",       // 4 bytes
		"a€b𝄞cé",  // mixed widths
		"日本語テキスト", // runs of 3-byte characters
		"😀😀",      // consecutive 4-byte characters
	} {
		b := []byte(s)
		for cut := 0; cut <= len(b); cut++ {
			want := cut
			for want > 0 && want < len(b) && !utf8.RuneStart(b[want]) {
				want--
			}
			if got := CompleteUTF8(b[:cut]); got != want {
				t.Errorf("CompleteUTF8(%q[:%d]) = %d, want %d", s, cut, got, want)
			}
		}
	}
}

// TestCompleteUTF8Invalid checks that bytes no character can complete are passed on
// rather than held back forever.
func TestCompleteUTF8Invalid(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want int
	}{
		{"nil", nil, 0},
		{"empty", []byte{}, 0},
		{"lone 0xff", []byte{'a', 0xff}, 2},
		{"lone continuation", []byte{'a', 0x80}, 2},
		{"five continuations", []byte{0x80, 0x80, 0x80, 0x80, 0x80}, 5},
		{"start then ascii", []byte{0xe2, 'x'}, 2},
		{"overlong start", []byte{0xc0}, 1},
		{"surrogate prefix", []byte{0xed, 0xa0}, 2},
		{"start out of range", []byte{0xf0, 0x80}, 2},
		{"beyond U+10FFFF", []byte{0xf5}, 1},
		{"valid then truncated", []byte{'o', 'k', 0xf0, 0x9f, 0x98}, 2},
		{"invalid then truncated", []byte{0xff, 0xe2, 0x82}, 1},
	} {
		if got := CompleteUTF8(c.b); got != c.want {
			t.Errorf("%s: CompleteUTF8(% x) = %d, want %d", c.name, c.b, got, c.want)
		}
	}
}

func TestPending(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	rfd := int(r.Fd())
	for _, c := range []struct {
		name  string
		write int // bytes written before the check
		read  int // bytes read before the check
		fd    int
		want  int
	}{
		{"empty pipe", 0, 0, rfd, 0},
		{"written", 5, 0, rfd, 5},
		{"more written", 3, 0, rfd, 8},
		{"partly read", 0, 6, rfd, 2},
		{"all read", 0, 2, rfd, 0},
		{"not open", 0, 0, -1, 0},
		{"not a pipe", 0, 0, int(devNull.Fd()), 0},
	} {
		if c.write > 0 {
			if _, err := w.Write(make([]byte, c.write)); err != nil {
				t.Fatal(err)
			}
		}
		if c.read > 0 {
			if _, err := r.Read(make([]byte, c.read)); err != nil {
				t.Fatal(err)
			}
		}
		if got := Pending(c.fd); got != c.want {
			t.Errorf("%s: Pending = %d, want %d", c.name, got, c.want)
		}
	}
}

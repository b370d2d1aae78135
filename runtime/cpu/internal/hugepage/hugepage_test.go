package hugepage

import "testing"

func TestInterior(t *testing.T) {
	for _, c := range []struct {
		addr         uintptr
		n, off, size int
	}{
		{0, 2 * Size, 0, 2 * Size},
		{Size, Size, 0, Size},
		{Size + 8192, 2 * Size, Size - 8192, Size},
		{Size + 8192, 3*Size - 8192, Size - 8192, 2 * Size},
		{Size + 8192, Size, 0, 0},      // within two pages, none whole
		{Size - 64, 64, 0, 0},          // ends on a boundary
		{3*Size + 1, 2*Size - 2, 0, 0}, // one page short of whole
		{3*Size + 1, 2 * Size, Size - 1, Size},
	} {
		if off, size := interior(c.addr, c.n); off != c.off || size != c.size {
			t.Errorf("interior(%#x, %d) = %d, %d, want %d, %d", c.addr, c.n, off, size, c.off, c.size)
		}
	}
}

// TestAdvise checks that advising keeps the contents, on buffers below and above
// MinBytes and at an unaligned start.
func TestAdvise(t *testing.T) {
	for _, n := range []int{0, 100, MinBytes - 1, MinBytes, 3*Size + 12345} {
		b := make([]byte, n+1)
		for i := range b {
			b[i] = byte(i * 7)
		}
		Advise(b[1:])
		for i := range b {
			if b[i] != byte(i*7) {
				t.Fatalf("n=%d: byte %d changed", n, i)
			}
		}
	}
	f := make([]float32, MinBytes/4+5)
	f[len(f)-1] = 3
	AdviseFloats(f)
	AdviseFloats(nil)
	if f[len(f)-1] != 3 {
		t.Fatal("AdviseFloats changed the buffer")
	}
}

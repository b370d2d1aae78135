//go:build cgo

package openblas

import (
	"strings"
	"testing"
)

// TestLoad checks that Debian's OpenBLAS (installed by install/deps.sh) loads and
// multiplies, or that the failure names what was tried.
func TestLoad(t *testing.T) {
	if err := Load(); err != nil {
		for _, want := range candidates {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("load error %q does not name candidate %s", err, want)
			}
		}
		t.Fatalf("OpenBLAS should be installed (libopenblas0): %v", err)
	}
	if !Available() || Path() == "" || !strings.Contains(Config(), "OpenBLAS") {
		t.Fatalf("loaded, but Available=%v Path=%q Config=%q", Available(), Path(), Config())
	}
	// [1 2; 3 4] times [5 6; 7 8]ᵀ, then the same in float64 with beta = 1.
	a, b := []float32{1, 2, 3, 4}, []float32{5, 6, 7, 8}
	c := make([]float32, 4)
	Sgemm(false, true, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2)
	if want := []float32{17, 23, 39, 53}; !equal(c, want) {
		t.Errorf("Sgemm = %v, want %v", c, want)
	}
	d := []float64{1, 1, 1, 1}
	Dgemm(true, false, 2, 2, 2, 2, []float64{1, 2, 3, 4}, 2, []float64{5, 6, 7, 8}, 2, 1, d, 2)
	if want := []float64{53, 61, 77, 89}; !equal(d, want) {
		t.Errorf("Dgemm = %v, want %v", d, want)
	}
}

func equal[T float32 | float64](a, b []T) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

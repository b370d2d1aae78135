package tensor

import (
	"math"
	"testing"
)

// TestDropoutKeepMatchesUniformDraw checks that the integer threshold keeps exactly the
// elements whose float32 uniform draw u = (hash>>8) / 2^24 is at least the rate, the
// formula the GPU shader computes, at rates on and between multiples of 2^-24.
func TestDropoutKeepMatchesUniformDraw(t *testing.T) {
	ulp := float32(1.0 / (1 << 24))
	rates := []float32{0, ulp, 0.1, 0.3, 0.5, 0.75 - ulp, 0.999, 1, -0.5, 2, float32(math.NaN())}
	for _, rate := range rates {
		for _, seed := range []uint32{0, 1, 42, 1 << 31} {
			draw := NewDropoutDraw(seed, rate)
			for i := uint32(0); i < 1<<14; i++ {
				u := float32(pcgHash(i+pcgHash(seed))>>8) * (1.0 / (1 << 24))
				want := u >= rate || rate != rate // a NaN rate keeps everything
				if got := draw.Keep(i); got != want {
					t.Fatalf("rate %v seed %d element %d: Keep %v, uniform draw %v says %v", rate, seed, i, got, u, want)
				}
				if got := DropoutKeep(seed, i, rate); got != want {
					t.Fatalf("rate %v seed %d element %d: DropoutKeep %v, want %v", rate, seed, i, got, want)
				}
			}
		}
	}
}

// TestDropoutBoundaryDraw pins the threshold where a draw equals the rate exactly.
func TestDropoutBoundaryDraw(t *testing.T) {
	for _, tc := range []struct {
		rate float32
		want uint32
	}{{0, 0}, {0.5, 1 << 23}, {0.5 + 1.0/(1<<24), 1<<23 + 1}, {0.1, 1677722}, {1, 1 << 24}, {3, 1 << 24}} {
		if got := NewDropoutDraw(7, tc.rate).threshold; got != tc.want {
			t.Errorf("rate %v: threshold %d, want %d", tc.rate, got, tc.want)
		}
	}
}

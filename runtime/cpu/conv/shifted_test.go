package conv

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
)

// TestCasesCoverEveryPath checks that convCases run every path of the three passes
// under the micro-kernel in use: the general implicit GEMM, the depthwise loops, the
// direct 1×1 product, and the wide grid with and without padding, narrowed or not, and
// with its gradients per tap or (too few channels) through the general path.
func TestCasesCoverEveryPath(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range convCases() {
		g := newGeometry(p.normalized())
		switch {
		case g.directDepthwise():
			seen["depthwise"] = true
		case g.direct:
			seen["direct"] = true
		case g.shifted():
			wd := newWindow(g.p)
			seen["shifted"] = true
			seen["shifted padded"] = seen["shifted padded"] || wd.padded
			seen["shifted unpadded"] = seen["shifted unpadded"] || !wd.padded
			seen["shifted narrowed"] = seen["shifted narrowed"] || wd.n != g.plane
			seen["shifted in place"] = seen["shifted in place"] || wd.n == g.plane
			seen["shifted, forward general"] = seen["shifted, forward general"] || !g.wideForward(wd)
			seen["per tap"] = seen["per tap"] || g.perTap()
			seen["shifted, gradients general"] = seen["shifted, gradients general"] || !g.perTap()
			seen["per tap, groups"] = seen["per tap, groups"] || g.perTap() && p.Groups > 1
		default:
			seen["general"] = true
		}
	}
	for _, path := range []string{"depthwise", "direct", "shifted", "shifted padded", "shifted unpadded",
		"shifted narrowed", "shifted in place", "shifted, forward general", "per tap", "shifted, gradients general", "per tap, groups", "general"} {
		if !seen[path] {
			t.Errorf("no case takes the %s path (micro-kernel rows %d)", path, gemm.MicroRows())
		}
	}
}

// TestEveryKernelShape reruns the convolution tests with each GEMM micro-kernel shape
// forced (GML_GEMM_KERNEL: the shape decides gemm.MicroRows and so which convolutions
// run per tap) and with the pure-Go GEMM (GML_BLAS=go), in a child process because the
// choice is made once per process.
func TestEveryKernelShape(t *testing.T) {
	childtest.Rerun(t, "^(TestConvMatchesNaive|TestTransposedMatchesNaive|TestCasesCoverEveryPath)$",
		"GML_GEMM_KERNEL=avx2", "GML_GEMM_KERNEL=avx512", "GML_BLAS=go")
}

// TestTransposeWide checks transposeWide, in assembly and in Go, against its definition
// on ragged sizes (channels not a multiple of 8, rows shorter and longer than 8
// positions, not a multiple of 8), and that the wide grid's junk columns stay as they
// were.
func TestTransposeWide(t *testing.T) {
	saved := transpose8Vec
	defer func() { transpose8Vec = saved }()
	r := rand.New(rand.NewPCG(15, 16))
	for _, vecOn := range []bool{false, true} {
		transpose8Vec = vecOn && saved
		for _, s := range []struct{ ch, oh, ow, junk int }{
			{1, 1, 1, 2}, {8, 3, 8, 2}, {7, 2, 9, 0}, {16, 11, 11, 2}, {33, 5, 17, 3}, {64, 2, 24, 2}, {9, 4, 7, 1},
		} {
			p := Params{OutChannels: s.ch, InH: s.oh, InW: s.ow, KernelH: 1, KernelW: 1, Batch: 1, InChannels: 1}
			wd := window{wp: s.ow + s.junk}
			y := random(r, s.ch*s.oh*s.ow)
			dst := make([]float32, s.oh*wd.wp*s.ch)
			for i := range dst {
				dst[i] = -7 // junk columns must keep it
			}
			wd.transposeWide(p, dst, y)
			for o := range s.oh {
				for q := range wd.wp {
					for k := range s.ch {
						want := float32(-7)
						if q < s.ow {
							want = y[(k*s.oh+o)*s.ow+q]
						}
						if got := dst[(o*wd.wp+q)*s.ch+k]; got != want {
							t.Fatalf("%+v (assembly %v): dst at row %d position %d channel %d = %v, want %v",
								s, transpose8Vec, o, q, k, got, want)
						}
					}
				}
			}
		}
	}
}

package conv

import (
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

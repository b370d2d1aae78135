//go:build !amd64 && !arm64

package gemm

import (
	"fmt"
	"runtime"
)

// errNoNative is why Native is unavailable: no assembly for this architecture.
var errNoNative = fmt.Errorf("gemm: no native kernel for GOARCH=%s", runtime.GOARCH)

// asmKernel reports that there is no assembly micro-kernel for this architecture.
func asmKernel(string) *kernel { return nil }

// nativeTranspose4 reports that there is no assembly transpose for this architecture.
func nativeTranspose4() func(dst []float32, ldd int, src []float32, ld int, k int) { return nil }

// nativeCopyPanels reports that there is no assembly panel copy for this architecture
// (the Go loop of PackB runs).
func nativeCopyPanels() func(dst []float32, kb int, src []float32, ld, rows, panels int) { return nil }

// nativeVector reports that there are no assembly vector routines for this architecture.
func nativeVector() (axpy func(alpha float32, x, y []float32), dot func(x, y []float32) float32) {
	return nil, nil
}

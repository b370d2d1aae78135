//go:build !amd64

package gemm

import (
	"fmt"
	"runtime"
)

// nativeKernel reports that there is no assembly micro-kernel for this architecture.
func nativeKernel() (microKernel, error) {
	return nil, fmt.Errorf("gemm: no native kernel for GOARCH=%s", runtime.GOARCH)
}

// nativeAxpy reports that there is no assembly AXPY for this architecture.
func nativeAxpy() func(alpha float32, x, y []float32) { return nil }

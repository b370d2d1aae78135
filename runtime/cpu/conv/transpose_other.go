//go:build !amd64

package conv

// Without assembly transposeWide runs its Go code only.

var transpose8Vec = false

func transpose8(dst []float32, ldd int, src []float32, ld, n int) {}

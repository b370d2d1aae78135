//go:build amd64 || arm64

package gstack

// stackHi returns the calling goroutine's stack top (stack_$GOARCH.s).
func stackHi() uintptr

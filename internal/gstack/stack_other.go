//go:build !amd64 && !arm64

package gstack

// stackHi returns 0: the stack top is not known on this architecture.
func stackHi() uintptr { return 0 }

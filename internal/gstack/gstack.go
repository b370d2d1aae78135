// Package gstack tells how much stack the calling goroutine uses, cheaply (a few
// nanoseconds), so that runaway recursion can be stopped before the Go runtime's stack
// limit, whose overflow is a fatal error that no recover catches.
//
// The goroutine's stack top (g.stack.hi, the first word after g.stack.lo at the start
// of the runtime's g structure, an offset the runtime's cgo code relies on) is read in
// assembly on amd64 and arm64; elsewhere nothing is known and Used returns 0.
package gstack

import "unsafe"

// Used returns the bytes of stack the calling goroutine uses, or 0 where that is not
// known.
//
//go:noinline
func Used() uintptr {
	hi := stackHi()
	if hi == 0 {
		return 0
	}
	var here byte
	return hi - uintptr(unsafe.Pointer(&here))
}

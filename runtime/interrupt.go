package runtime

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrInterrupted is returned by long-running library calls (Fit, Run, training loops)
// when the user interrupts them, for example with the notebook's Interrupt button.
var ErrInterrupted = errors.New("gml: interrupted")

// current holds the context of the cell (or program section) that is running now.
// The kernel binds each cell's context; plain Go programs may bind their own.
var current atomic.Pointer[context.Context]

// BindInterrupt makes ctx the one that Interrupted consults, until the returned function
// is called, which restores the previous binding. The kernel calls it around each cell.
func BindInterrupt(ctx context.Context) (restore func()) {
	prev := current.Swap(&ctx)
	return func() { current.Store(prev) }
}

// Interrupted reports ErrInterrupted when the bound context has been cancelled, and nil
// otherwise. It costs one atomic load and a channel poll, so long loops in compiled code
// call it once per step (per batch, per graph run) to make Interrupt work mid-call.
func Interrupted() error {
	p := current.Load()
	if p == nil {
		return nil
	}
	select {
	case <-(*p).Done():
		return ErrInterrupted
	default:
		return nil
	}
}

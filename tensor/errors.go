package tensor

import (
	"errors"
	"fmt"
)

// Error is what graph building panics with when an op is misused: a shape mismatch, a
// wrong dtype, an axis out of range, nodes from different graphs. Shape mistakes are
// programming errors, so builders panic rather than return errors at every call;
// Catch turns such a panic back into an error at an API edge (a Compile, a cell).
type Error struct {
	Op  string // the op being built, e.g. "matmul"
	Err error
}

func (e *Error) Error() string { return "tensor: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// fail panics with an *Error for op.
func fail(op Op, format string, args ...any) {
	panic(&Error{Op: op.String(), Err: fmt.Errorf(format, args...)})
}

// Catch runs build and returns the *Error it panicked with, or nil. Other panics pass
// through unchanged: they are bugs, not misuse.
func Catch(build func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			var te *Error
			if e, ok := r.(error); ok && errors.As(e, &te) {
				err = te
				return
			}
			panic(r)
		}
	}()
	build()
	return nil
}

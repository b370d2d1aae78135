package ag

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Error is what ag panics with when an op is misused (a shape mismatch, a gradient of
// a tensor that has none) or when running the recorded work fails. Op names the ag
// operation ("matmul", "backward", "item"), Site the line of the caller outside ag
// where Go reports one (in a notebook cell the kernel's traceback gives the cell line).
type Error struct {
	Op   string
	Site string
	Err  error
}

func (e *Error) Error() string {
	s := "ag: " + e.Op
	if e.Site != "" {
		s += " at " + e.Site
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// fail panics with an *Error for op at the caller's site.
func fail(op string, format string, args ...any) {
	panic(&Error{Op: op, Site: site(), Err: fmt.Errorf(format, args...)})
}

// failErr panics with err as an *Error for op; an *Error passes unchanged and a graph
// builder's *tensor.Error keeps its message.
func failErr(op string, err error) {
	var ae *Error
	if errors.As(err, &ae) {
		panic(ae)
	}
	panic(&Error{Op: op, Site: site(), Err: err})
}

// Catch runs fn and returns the *Error it panicked with, or nil: the way programs
// (rather than notebook cells) turn ag's panics into errors. Other panics pass through:
// they are bugs, not misuse.
func Catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				var ae *Error
				if errors.As(e, &ae) {
					err = ae
					return
				}
			}
			panic(r)
		}
	}()
	fn()
	return nil
}

// build runs a graph builder and turns its *tensor.Error into an ag *Error for op.
func build(op string, fn func()) {
	if err := tensor.Catch(fn); err != nil {
		failErr(op, err)
	}
}

// site returns "file:line" of the first caller outside ag, the Go runtime, reflection
// and the interpreter, or "" (code interpreted in a cell has no Go frames of its own).
func site() string {
	return siteOf(callers(3))
}

// callers records the program counters of the current stack from skip on.
func callers(skip int) []uintptr {
	pc := make([]uintptr, 24)
	return pc[:goruntime.Callers(skip, pc)]
}

// siteOf finds the first frame of pcs outside ag and the machinery above it.
func siteOf(pcs []uintptr) string {
	if len(pcs) == 0 {
		return ""
	}
	frames := goruntime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		fn := f.Function
		internal := strings.HasPrefix(fn, "github.com/gml-dev/gml/ag.") || strings.HasPrefix(fn, "runtime.") ||
			strings.HasPrefix(fn, "reflect.") || strings.HasPrefix(fn, "github.com/traefik/yaegi/")
		if !internal && f.File != "" {
			return fmt.Sprintf("%s:%d", shortFile(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// shortFile keeps the last two elements of a path: "ag/ops_test.go".
func shortFile(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return path
	}
	if j := strings.LastIndexByte(path[:i], '/'); j >= 0 {
		return path[j+1:]
	}
	return path
}

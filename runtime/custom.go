package runtime

import (
	"fmt"
	"sync"

	"github.com/gml-dev/gml/tensor"
)

// CustomCall is one call of a custom op's kernel. The kernel computes the output rows
// [Lo, Hi): a row is the output's innermost axis (Row values), so the output holds
// Rows rows (1 for a scalar). Calls for disjoint row ranges run at once on several
// goroutines, so a kernel writes only its own rows of Out and must not keep state
// between calls; it may read all of In. An in-place op's Out starts as input 0's
// values.
type CustomCall struct {
	Out      []float32
	OutShape tensor.Shape
	In       [][]float32
	InShapes []tensor.Shape
	Params   []float64
	Lo, Hi   int // this call's rows of Out
	Rows     int // rows in all
	Row      int // values per row (the output's innermost dimension; 1 for a scalar)
}

// CustomFunc is a custom op's kernel. An error fails the graph's run, naming the node.
type CustomFunc func(c *CustomCall) error

// CustomOp is a registered custom op.
type CustomOp struct {
	Name   string
	Kernel CustomFunc
	Grad   tensor.CustomGradFunc // nil: not differentiable
	// Grain is the fewest rows one call takes; 0 picks enough rows for about 16K
	// values. A kernel that must see every row at once sets it to a huge number.
	Grain int
}

// CustomOption configures RegisterCustomOp.
type CustomOption func(*CustomOp)

// WithGrad gives a custom op its gradient, built from graph ops (other custom ops
// included) when tensor.Grad reaches one of its nodes.
func WithGrad(g tensor.CustomGradFunc) CustomOption { return func(o *CustomOp) { o.Grad = g } }

// WithGrain sets the fewest output rows one call of the kernel takes.
func WithGrain(rows int) CustomOption { return func(o *CustomOp) { o.Grain = rows } }

// Serial makes every call of the kernel see all rows (Lo 0, Hi Rows), on one goroutine.
func Serial() CustomOption { return func(o *CustomOp) { o.Grain = int(^uint(0) >> 1) } }

var customOps = struct {
	sync.RWMutex
	m map[string]*CustomOp
}{m: map[string]*CustomOp{}}

// RegisterCustomOp makes the kernel fn available to graphs as tensor.Custom(name, ...)
// and tensor.CustomInPlace(name, ...). Registering a name again replaces the kernel
// (graphs compiled before keep the one they were compiled with), so a notebook cell can
// redefine its op. Custom nodes run on the CPU: on a GPU graph the scheduler moves them
// there and counts each as a fallback.
func RegisterCustomOp(name string, fn CustomFunc, opts ...CustomOption) error {
	if name == "" || fn == nil {
		return fmt.Errorf("runtime: RegisterCustomOp needs a name and a kernel")
	}
	op := &CustomOp{Name: name, Kernel: fn}
	for _, o := range opts {
		o(op)
	}
	customOps.Lock()
	customOps.m[name] = op
	customOps.Unlock()
	tensor.DeclareCustomOp(name, op.Grad)
	return nil
}

// LookupCustomOp returns the registered custom op name.
func LookupCustomOp(name string) (*CustomOp, error) {
	customOps.RLock()
	defer customOps.RUnlock()
	if op, ok := customOps.m[name]; ok {
		return op, nil
	}
	return nil, fmt.Errorf("runtime: no custom op %q is registered (registered: %v)", name, tensor.CustomOps())
}

package ag

import (
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"sync"
	"weak"

	"github.com/gml-dev/gml/tensor"
)

// Tensor is a value in an ag computation: a parameter, a constant, or the result of an
// op. Results are deferred: an op records a node on its tape and returns at once, with
// the shape and dtype known; the value is computed when something reads it (Value,
// Item, Float32s, ...) or when the recorded work runs for another reason (Step, a
// read of another value). A tensor remembers how it was made, so Backward can reach the
// parameters behind it and a value no longer held on the device can be recomputed
// while the parameters it depends on are unchanged. Tensors are immutable, except
// parameters, whose value the optimizer (or Assign) updates.
type Tensor struct {
	tape  *Tape // nil for constants not yet used by a recorded op
	dtype tensor.DType
	shape tensor.Shape
	op    string // what made it: "param", "const", "matmul", ...
	seq   int    // tape position of the op that made it
	pcs   []uintptr

	// The recipe: emit builds the node from the nodes of in, in any trace.
	in   []*Tensor
	emit emitter
	// vers holds, for inputs that are parameters, the version read (0 for others).
	vers []uint64

	requiresGrad bool
	keepGrad     bool    // RetainGrad, or a leaf made to require a gradient
	gradOf       *Tensor // the gradient of the last Backward, for keepGrad tensors

	tr   *trace // the trace holding node while it has not run
	node *tensor.Node
	ran  runRef         // the run that computed it
	host *tensor.Tensor // its value on the host: constant data, or a downloaded value
	err  error          // why the run meant to compute it failed

	p *param // parameters only
}

// param is a parameter's device state: its variable, the variable accumulating its
// gradient (made by the first Backward that reaches it), and versions.
type param struct {
	t    weak.Pointer[Tensor]
	v    *tensor.Variable
	g    *tensor.Variable
	name string
	// gradSet is true while g holds a gradient (false before the first Backward and
	// after ZeroGrad): the next Backward adds to it, or assigns when false.
	gradSet bool
	// version counts the runs that wrote v, so recipes that read an older value are
	// not replayed against a newer one.
	version uint64
	// buffer marks non-trainable state (batch-norm running statistics).
	buffer bool
	// owned marks variables ag made (not a viewed nn model's), whose device memory ag
	// releases once the parameter is unreachable.
	owned bool
}

var paramCount struct {
	sync.Mutex
	n int
}

// Param makes a trainable parameter initialised with t (copied), resident on the current
// tape's device from its first use. It requires a gradient; Backward accumulates into
// its Grad, and optimizers update it in place.
func Param(t *tensor.Tensor) *Tensor {
	if t == nil {
		fail("param", "nil tensor")
	}
	if !t.DType().IsFloat() {
		fail("param", "parameters must be floating point, have %v", t.DType())
	}
	return newVariable(CurrentTape(), t.Clone(), false)
}

// newVariable makes a parameter (or, with buffer, non-trainable state) on tape tp.
func newVariable(tp *Tape, init *tensor.Tensor, buffer bool) *Tensor {
	paramCount.Lock()
	paramCount.n++
	name := fmt.Sprintf("param_%d", paramCount.n)
	paramCount.Unlock()
	v := tensor.NewVariable("ag/"+name, init)
	t := &Tensor{tape: tp, dtype: init.DType(), shape: init.Shape().Clone(), op: "param", requiresGrad: !buffer}
	t.p = &param{t: weak.Make(t), v: v, name: name, version: 1, buffer: buffer, owned: true}
	tp.mu.Lock()
	tp.params[v] = t.p
	tp.mu.Unlock()
	goruntime.AddCleanup(t, tp.forget, t.p)
	return t
}

// forget drops a parameter no Go value reaches any more (a model of an earlier cell
// run): the tape stops tracking it and the runtime frees its value and gradient on the
// device. No recorded work can read it: every recipe that did holds the parameter.
func (tp *Tape) forget(p *param) {
	tp.mu.Lock()
	if tp.params[p.v] == p {
		delete(tp.params, p.v)
	}
	g := p.g
	if g != nil && tp.params[g] == p {
		delete(tp.params, g)
	}
	tp.mu.Unlock()
	if p.owned {
		tp.rt.Release(p.v)
	}
	if g != nil {
		tp.rt.Release(g)
	}
}

// Const wraps host data (not copied: do not change t afterwards) as a constant tensor. It
// needs no gradient and is uploaded with the run that first reads it; KeepOnDevice
// spares the uploads of data used again and again.
func Const(t *tensor.Tensor) *Tensor {
	if t == nil {
		fail("const", "nil tensor")
	}
	return &Tensor{dtype: t.DType(), shape: t.Shape().Clone(), op: "const", host: t}
}

// FromFloat32s makes an F32 constant of the given shape (data copied).
func FromFloat32s(shape []int, data []float32) *Tensor {
	t, err := tensor.FromFloat32s(tensor.Shape(shape), data)
	if err != nil {
		failErr("const", err)
	}
	return Const(t)
}

// FromFloat64s makes an F32 constant of the given shape from float64 data.
func FromFloat64s(shape []int, data []float64) *Tensor {
	t, err := tensor.FromFloat64s(tensor.Shape(shape), data)
	if err != nil {
		failErr("const", err)
	}
	return Const(t)
}

// FromRows makes a 2-D F32 constant from equally long rows.
func FromRows(rows [][]float64) *Tensor {
	t, err := tensor.FromRows(rows)
	if err != nil {
		failErr("const", err)
	}
	return Const(t)
}

// FromInts makes an I64 constant (class labels, token ids) of the given shape.
func FromInts(shape []int, data []int) *Tensor {
	t, err := tensor.FromInts(tensor.Shape(shape), data)
	if err != nil {
		failErr("const", err)
	}
	return Const(t)
}

// Scalar makes an F32 scalar constant.
func Scalar(v float64) *Tensor { return Const(tensor.Scalar(tensor.F32, v)) }

// Zeros makes an F32 constant of zeros.
func Zeros(shape ...int) *Tensor { return full(shape, 0) }

// Ones makes an F32 constant of ones.
func Ones(shape ...int) *Tensor { return full(shape, 1) }

func full(shape []int, v float32) *Tensor {
	if err := tensor.Shape(shape).Validate(); err != nil {
		failErr("const", err)
	}
	t := tensor.New(tensor.F32, shape...)
	if v != 0 {
		d := t.Float32s()
		for i := range d {
			d[i] = v
		}
	}
	return Const(t)
}

var rng = struct {
	sync.Mutex
	r *rand.Rand
}{r: rand.New(rand.NewPCG(1, 2))}

// SetSeed reseeds ag's random generator (Randn, Rand, layer initialisation) and the
// current tape's dropout seeds, so a cell that sets it first reproduces its results.
func SetSeed(seed uint64) {
	rng.Lock()
	rng.r = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Unlock()
	t := CurrentTape()
	t.mu.Lock()
	t.seed = uint32(seed*2654435761) | 1
	t.mu.Unlock()
}

// Randn makes an F32 constant of standard normal samples.
func Randn(shape ...int) *Tensor {
	return Const(randomTensor(shape, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }))
}

// Rand makes an F32 constant of samples uniform in [0, 1).
func Rand(shape ...int) *Tensor {
	return Const(randomTensor(shape, func(r *rand.Rand) float32 { return r.Float32() }))
}

func randomTensor(shape []int, draw func(r *rand.Rand) float32) *tensor.Tensor {
	if err := tensor.Shape(shape).Validate(); err != nil {
		failErr("const", err)
	}
	t := tensor.New(tensor.F32, shape...)
	rng.Lock()
	defer rng.Unlock()
	for i, d := 0, t.Float32s(); i < len(d); i++ {
		d[i] = draw(rng.r)
	}
	return t
}

// Shape returns the shape (a copy).
func (t *Tensor) Shape() []int { return append([]int(nil), t.shape...) }

// DType returns the element type.
func (t *Tensor) DType() tensor.DType { return t.dtype }

// Rank is the number of axes.
func (t *Tensor) Rank() int { return len(t.shape) }

// Size is the number of elements.
func (t *Tensor) Size() int { return t.shape.Size() }

// Op names what made the tensor: "param", "const" or an op such as "matmul".
func (t *Tensor) Op() string { return t.op }

// Tape returns the tape the tensor belongs to (nil for a constant no op has used).
func (t *Tensor) Tape() *Tape { return t.tape }

// RequiresGrad reports whether gradients flow back through t to parameters.
func (t *Tensor) RequiresGrad() bool { return t.requiresGrad }

// IsParam reports whether t is a trainable parameter.
func (t *Tensor) IsParam() bool { return t.p != nil && !t.p.buffer }

// Name returns a parameter's name ("" for other tensors).
func (t *Tensor) Name() string {
	if t.p == nil {
		return ""
	}
	return t.p.name
}

// SetName renames a parameter (layers name theirs "weight", "bias", ...) and returns it.
func (t *Tensor) SetName(name string) *Tensor {
	if t.p == nil {
		fail("set_name", "%s is not a parameter", t.describe())
	}
	t.p.name = name
	return t
}

// SetRequiresGrad makes a constant require a gradient, so Backward computes its Grad
// (the gradient of a loss with respect to an input, say), or stops requiring one. Only
// leaves (constants and parameters) can change: a result requires a gradient exactly
// when one of its inputs does.
func (t *Tensor) SetRequiresGrad(on bool) *Tensor {
	if t.emit != nil {
		fail("set_requires_grad", "%s is the result of an op; use Detach to stop gradients through it", t.describe())
	}
	if on && !t.dtype.IsFloat() {
		fail("set_requires_grad", "%s is %v: only floating-point tensors have gradients", t.describe(), t.dtype)
	}
	t.requiresGrad = on
	t.keepGrad = on && t.p == nil
	return t
}

// RetainGrad asks Backward to keep t's gradient too, although t is an intermediate
// result (parameters and leaves that require a gradient always have theirs).
func (t *Tensor) RetainGrad() *Tensor {
	if !t.requiresGrad {
		fail("retain_grad", "%s does not require a gradient: no parameter reaches it", t.describe())
	}
	t.keepGrad = true
	return t
}

// describe names the tensor in messages: "matmul #12 f32[32 128]".
func (t *Tensor) describe() string {
	s := t.op
	if t.p != nil {
		s = "parameter " + t.p.name
	} else if t.emit != nil {
		s = fmt.Sprintf("%s #%d", t.op, t.seq)
	}
	return fmt.Sprintf("%s %v%v", s, t.dtype, t.shape)
}

// String shows the tensor's shape and, when it can be read, its values. It runs pending
// work like any read.
func (t *Tensor) String() string {
	head := t.describe()
	var v *tensor.Tensor
	if err := Catch(func() { v = t.Value() }); err != nil {
		return head + " (" + err.Error() + ")"
	}
	return head + " " + strings.TrimSpace(v.String())
}

package tensor

import "fmt"

// Training ops: dropout with a replayable seed, and the in-place variable updates.

func init() {
	registerShape(OpDropout, dropoutRule)
	registerShape(OpDropoutMask, dropoutRule)
	registerShape(OpAssign, assignRule)
	registerShape(OpSGDUpdate, sgdRule)
	registerShape(OpAdamUpdate, adamRule)
}

// isScalar reports whether n holds exactly one element.
func isScalar(n *Node) bool { return n.shape.Size() == 1 }

func dropoutRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(DropoutAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be DropoutAttr, got %T", attr)
	}
	x, seed := in[0], in[1]
	if !seed.dtype.IsInt() || !isScalar(seed) {
		return 0, nil, nil, fmt.Errorf("seed must be one i32 or i64 element, have %s", shapesOf(in))
	}
	if !(at.Rate >= 0 && at.Rate < 1) {
		return 0, nil, nil, fmt.Errorf("rate %v outside [0, 1)", at.Rate)
	}
	dt := x.dtype
	if !dt.IsFloat() { // a mask like an integer tensor (Dropout itself takes floats only)
		dt = F32
	}
	return dt, x.shape, at, nil
}

// checkVariable reports an error unless input i of an in-place op is a variable.
func checkVariable(in []*Node, i int, role string) error {
	if in[i].op != OpVariable {
		return fmt.Errorf("%s must be a variable (Graph.Var), have %v", role, in[i])
	}
	return nil
}

// checkLike reports an error unless n has ref's dtype and shape.
func checkLike(n, ref *Node, role string, in []*Node) error {
	if n.dtype != ref.dtype || !n.shape.Equal(ref.shape) {
		return fmt.Errorf("%s must match the parameter's dtype and shape: %s", role, shapesOf(in))
	}
	return nil
}

func assignRule(attr any, in []*Node) (DType, Shape, any, error) {
	if err := checkVariable(in, 0, "the target"); err != nil {
		return 0, nil, nil, err
	}
	if err := checkLike(in[1], in[0], "the value", in); err != nil {
		return 0, nil, nil, err
	}
	return in[0].dtype, in[0].shape, nil, nil
}

func checkScalarFloat(n *Node, role string, in []*Node) error {
	if !n.dtype.IsFloat() || !isScalar(n) {
		return fmt.Errorf("%s must be one floating-point element: %s", role, shapesOf(in))
	}
	return nil
}

func sgdRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(SGDAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be SGDAttr, got %T", attr)
	}
	p := in[0]
	for _, err := range []error{
		checkVariable(in, 0, "the parameter"), checkVariable(in, 2, "the velocity"),
		checkLike(in[1], p, "the gradient", in), checkLike(in[2], p, "the velocity", in),
		checkScalarFloat(in[3], "the learning rate", in),
	} {
		if err != nil {
			return 0, nil, nil, err
		}
	}
	if at.Momentum < 0 || at.WeightDecay < 0 || (at.Nesterov && at.Momentum == 0) {
		return 0, nil, nil, fmt.Errorf("invalid settings %+v (Nesterov needs momentum > 0)", at)
	}
	return p.dtype, p.shape, at, nil
}

func adamRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AdamAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AdamAttr, got %T", attr)
	}
	p := in[0]
	for _, err := range []error{
		checkVariable(in, 0, "the parameter"), checkVariable(in, 2, "the first moment"),
		checkVariable(in, 3, "the second moment"),
		checkLike(in[1], p, "the gradient", in), checkLike(in[2], p, "the first moment", in),
		checkLike(in[3], p, "the second moment", in), checkScalarFloat(in[4], "the learning rate", in),
	} {
		if err != nil {
			return 0, nil, nil, err
		}
	}
	if s := in[5]; !isScalar(s) || s.dtype == Bool {
		return 0, nil, nil, fmt.Errorf("the step must be one numeric element: %s", shapesOf(in))
	}
	if at.Beta1 < 0 || at.Beta1 >= 1 || at.Beta2 < 0 || at.Beta2 >= 1 || at.Eps < 0 || at.WeightDecay < 0 {
		return 0, nil, nil, fmt.Errorf("invalid settings %+v (betas in [0, 1), eps and weight decay >= 0)", at)
	}
	return p.dtype, p.shape, at, nil
}

// Dropout zeroes each element of x with probability rate and scales the survivors by
// 1/(1-rate). The mask is DropoutKeep(seed, i, rate) for element i, so a run is
// replayable from the seed (one i32 or i64 element fed per step).
func Dropout(x, seed *Node, rate float32) *Node {
	return Apply(OpDropout, DropoutAttr{Rate: rate}, x, seed)
}

// DropoutMask returns Dropout's multiplier for a tensor shaped like like: 0 or
// 1/(1-rate), in like's dtype when that is floating point and F32 otherwise.
func DropoutMask(like, seed *Node, rate float32) *Node {
	return Apply(OpDropoutMask, DropoutAttr{Rate: rate}, like, seed)
}

// Assign writes value into the variable v when the graph runs; the result is v's new
// value. Pass the Assign node to Compile among the outputs to have it executed.
func Assign(v, value *Node) *Node { return Apply(OpAssign, nil, v, value) }

// SGDUpdate updates parameter p and velocity vel in place from gradient g and learning
// rate lr (one element): with g' = g + WeightDecay·p, vel = Momentum·vel + g', and
// p -= lr·(Nesterov ? g' + Momentum·vel : vel). The result is p's new value.
func SGDUpdate(p, g, vel, lr *Node, attr SGDAttr) *Node {
	return Apply(OpSGDUpdate, attr, p, g, vel, lr)
}

// AdamUpdate updates p and the moments m and v in place. step is the 1-based step
// number t for the bias corrections (the caller increments it before the update):
// g' = g (+ WeightDecay·p unless Decoupled); m = β1·m + (1-β1)·g'; v = β2·v + (1-β2)·g'²;
// p -= lr·(m/(1-β1ᵗ)) / (√(v/(1-β2ᵗ)) + ε); with Decoupled (AdamW) p is first scaled by
// 1 - lr·WeightDecay. The result is p's new value.
func AdamUpdate(p, g, m, v, lr, step *Node, attr AdamAttr) *Node {
	return Apply(OpAdamUpdate, attr, p, g, m, v, lr, step)
}

// RMSpropAttr configures RMSpropUpdate (PyTorch's RMSprop): Alpha is the decay of the
// mean square, Eps is added to its root, Momentum (0 for none) smooths the step, and
// Centered divides by the root of the variance (mean square minus squared mean)
// instead. WeightDecay adds WeightDecay·p to the gradient.
type RMSpropAttr struct {
	Alpha, Eps, Momentum, WeightDecay float32
	Centered                          bool
}

// RMSpropUpdate updates parameter p in place from gradient g: with g' = g + WeightDecay·p,
// sq = α·sq + (1-α)·g'²; with Centered also avg = α·avg + (1-α)·g' and the denominator
// d = √(sq - avg²) + ε, else d = √sq + ε; with Momentum, buf = μ·buf + g'/d and
// p -= lr·buf, else p -= lr·g'/d. sq, avg (Centered only, else nil) and buf (Momentum
// only, else nil) are variables updated in place too. There is no fused kernel: it is a
// composition of elementwise ops and Assigns. The result is the Assign writing p.
func RMSpropUpdate(p, g, sq, avg, buf, lr *Node, attr RMSpropAttr) *Node {
	if !(attr.Alpha >= 0 && attr.Alpha < 1) || attr.Eps < 0 || attr.Momentum < 0 || attr.WeightDecay < 0 {
		panic(&Error{Op: "rmsprop_update", Err: fmt.Errorf("invalid settings %+v (alpha in [0, 1), eps, momentum and weight decay >= 0)", attr)})
	}
	if (avg == nil) == attr.Centered || (buf == nil) == (attr.Momentum > 0) {
		panic(&Error{Op: "rmsprop_update", Err: fmt.Errorf("the mean (%v) is needed exactly when centered, the momentum buffer (%v) exactly with momentum: %+v", avg != nil, buf != nil, attr)})
	}
	if attr.WeightDecay != 0 {
		g = Add(g, MulScalar(p, float64(attr.WeightDecay)))
	}
	a := float64(attr.Alpha)
	newSq := Assign(sq, Add(MulScalar(sq, a), MulScalar(Square(g), 1-a)))
	denom := newSq
	if attr.Centered {
		newAvg := Assign(avg, Add(MulScalar(avg, a), MulScalar(g, 1-a)))
		denom = Sub(newSq, Square(newAvg))
	}
	step := Div(g, AddScalar(Sqrt(denom), float64(attr.Eps)))
	if attr.Momentum > 0 {
		step = Assign(buf, Add(MulScalar(buf, float64(attr.Momentum)), step))
	}
	return Assign(p, Sub(p, Mul(lr, step)))
}

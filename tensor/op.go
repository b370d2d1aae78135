package tensor

import (
	"strconv"
	"strings"
)

// Op is the operation a node performs. The set is one flat enumeration shared by every
// backend and by autodiff. opTable (below) is the one place that states each op's
// facts: its name, kind and arity, the dtypes it accepts, its cost class, the inputs
// it writes in place, why it has no gradient where it has none, and the shader that
// computes it on the GPU with the op codes that select it there. Code elsewhere asks
// the table (Op.DTypes, Op.Cost, Op.GPU, ...) rather than keeping its own list of ops;
// the op files register what cannot be a table entry: the shape rule (ops_*.go), the
// builder functions and the gradient rule (grad_*.go).
//
// How to add an op (a unary one, say Softsign):
//
//  1. tensor/op.go: a constant in the enumeration, in its kind's group, and its row in
//     opTable (name, kind, arity, dtypes, cost, gpu; noGrad when no gradient flows).
//  2. tensor/ops_<family>.go: the builder (func Softsign(x *Node) *Node). A unary op
//     gets the elementwise shape rule from its row; other ops register a shape rule.
//  3. tensor/grad_<family>.go: the gradient rule (registerGrad), unless the row says
//     noGrad.
//  4. runtime/cpu/kernels_<family>*.go: the CPU kernel (for a unary op, an entry in
//     f32UnaryOps of kernels_elementwise_unary.go, and a case in intUnaryFactory if
//     the row accepts integers).
//  5. shaders/src/<shader>.comp: the case for the op's generated code (case
//     ELEMENTWISE_SOFTSIGN:), then `make generate`, which numbers the codes, writes
//     gpu/opcodes.go and shaders/src/opcodes.glsl and recompiles the SPIR-V: no op
//     code is written by hand anywhere. An op on a shader of its own registers a
//     recorder in gpu/ops_<family>*.go; the elementwise, compare, reduce and conv
//     shaders' recorders pick their ops up from the table.
//
// An op family has the same word in every layer: tensor/ops_<family>.go,
// runtime/cpu/kernels_<family>*.go, gpu/ops_<family>*.go and
// shaders/src/<family>*.comp (TestFamiliesLineUp).
//  6. internal/backendtest/cases_<family>.go: the op's cases (shapes, dtypes, input
//     ranges; for a unary or binary op one row of unarySpecs or binarySpecs, with its
//     float64 reference), run on every backend against the float64 reference, and a
//     gradient case when it is differentiable. An op that is neither elementwise nor a
//     composition adds its reference to ref_<family>.go. Tests fail for an op without
//     a case or a reference, for a dtype the row accepts but no case runs, for a
//     gradient rule without a gradient case, for an op code without a case in its
//     shader, and for a row that disagrees with the GPU backend's kernels.
//
// Then `go generate ./kernel/exec/symbols` in a commit of its own ("symbols:
// regenerate"), because the builder is new exported API.
type Op uint16

// The ops. Sources first, then elementwise, reductions, linear algebra, convolution,
// normalisation and attention, layout, training. Composite operations that need no
// kernel of their own (losses, LSTM/GRU cells, global pooling, outer product, split,
// transpose) are builders in this package that emit these primitives.
const (
	OpInvalid Op = iota

	// Sources: no inputs.
	OpInput    // fed per run; Attr: nil; the node's Name is the feed name
	OpConst    // a host tensor baked into the graph; Node.Value holds it
	OpVariable // a persistent runtime-resident tensor; Node.Variable holds it

	// Unary elementwise, same shape and dtype as the input unless noted.
	OpNeg
	OpAbs
	OpSign
	OpExp
	OpLog
	OpSqrt
	OpRsqrt
	OpSquare
	OpSin
	OpCos
	OpTanh
	OpSigmoid
	OpRelu
	OpLeakyRelu   // Attr: AlphaAttr
	OpElu         // Attr: AlphaAttr
	OpGelu        // Attr: GeluAttr (erf or tanh form)
	OpSilu        //
	OpSoftplus    //
	OpSoftsign    // x / (1 + |x|)
	OpHardSigmoid // Attr: HardSigmoidAttr{Alpha, Beta}: max(0, min(1, alpha*x+beta))
	OpHardSwish   // x * hardsigmoid(x) with alpha 1/6, beta 1/2
	OpErf
	OpFloor
	OpCeil
	OpRound // to the nearest integer, ties to even
	OpTan
	OpAtan
	OpClamp // Attr: ClampAttr{Min, Max}
	OpScale // Attr: ScaleAttr{Scale, Bias}: x*scale + bias
	OpNot   // Bool -> Bool
	OpCast  // Attr: CastAttr{To}

	// Binary elementwise with NumPy broadcasting. Comparisons and logical ops yield Bool.
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMod // remainder with the dividend's sign (C's fmod, torch.fmod): a - b*trunc(a/b)
	OpMaximum
	OpMinimum
	OpEqual
	OpNotEqual
	OpLess
	OpLessEqual
	OpGreater
	OpGreaterEqual
	OpAnd
	OpOr
	OpXor
	OpWhere // ternary: Where(cond Bool, a, b), all broadcast

	// Reductions. Attr: ReduceAttr{Axes, KeepDims} (Axes empty = all axes).
	OpSum
	OpMean
	OpMax
	OpMin
	OpProd
	OpVar    // Attr: ReduceAttr{..., Correction}: divide by N-Correction
	OpArgMax // Attr: ArgReduceAttr{Axis, KeepDims}; output I64
	OpArgMin
	OpCumSum // Attr: CumSumAttr{Axis, Exclusive, Reverse}
	OpTopK   // Attr: TopKAttr{K, Axis, Largest}; output: I64 indices, sorted; values are TakeAlong(x, idx)

	// Linear algebra.
	OpMatMul // Attr: MatMulAttr{TransA, TransB}; batched over leading dims with broadcasting

	// Convolution and pooling; data NC + spatial (NCW, NCHW), weights O, I/groups, spatial.
	OpConv           // Attr: ConvAttr
	OpConvTranspose  // Attr: ConvAttr (OutputPadding used)
	OpConvFilterGrad // inputs (x, gradOut); Attr: ConvAttr with FilterShape: gradient w.r.t. the weights
	OpMaxPool        // Attr: PoolAttr
	OpAvgPool        // Attr: PoolAttr
	OpMaxPoolGrad    // inputs (x, gradOut); Attr: PoolAttr
	OpAvgPoolGrad    // inputs (gradOut); Attr: PoolAttr with InputShape
	OpIm2Col         // Attr: ConvAttr; (N,C,spatial) -> (N, C*k..., out spatial...) for backends that lower conv to matmul

	// Normalisation, softmax and attention (fused; each also has a composition that
	// defines its semantics and serves backends without a kernel).
	OpSoftmax       // Attr: SoftmaxAttr{Axis, Scale}; optional 2nd input: additive mask (broadcast)
	OpLogSoftmax    // Attr: SoftmaxAttr
	OpLayerNorm     // inputs (x [, gamma, beta]); Attr: NormAttr{Axes (trailing), Eps}
	OpRMSNorm       // inputs (x [, gamma]); Attr: NormAttr
	OpAttention     // inputs (q, k, v [, mask]); (B, H, T, D); Attr: AttentionAttr{Causal, Scale}
	OpAttentionGrad // Attr: AttentionGradAttr{Causal, Scale, Output}: one backward result of attention; inputs by Output
	OpRoPE          // inputs (x, positions I32/I64 [T]); (B, H, T, D); Attr: RoPEAttr{Base, Dims}

	// Layout.
	OpReshape      // Attr: ReshapeAttr{Shape}; aliases its input's storage
	OpPermute      // Attr: PermuteAttr{Perm}
	OpConcat       // n-ary; Attr: AxisAttr
	OpSlice        // Attr: SliceAttr{Starts, Ends, Steps} per axis (resolved, non-negative)
	OpPad          // Attr: PadAttr{Before, After, Mode, Value}
	OpExpand       // Attr: ReshapeAttr{Shape}: broadcast to shape
	OpTile         // Attr: TileAttr{Reps}
	OpGather       // inputs (x, idx I32/I64); Attr: AxisAttr: out = x.shape[:a] + idx.shape + x.shape[a+1:]; embedding lookup / get_rows is axis 0
	OpTakeAlong    // inputs (x, idx); Attr: AxisAttr: idx has x's rank; out has idx's shape (gather_elements)
	OpScatter      // inputs (x, idx, updates); Attr: ScatterAttr{Axis, Reduce}: scatter_elements
	OpScatterAdd   // inputs (x, idx, updates); Attr: AxisAttr: out = x; out[..., idx, ...] += updates (Gather's adjoint)
	OpOneHot       // input idx; Attr: OneHotAttr{Depth, DType}
	OpDepthToSpace // Attr: DepthToSpaceAttr{Block, Mode}

	// Training.
	OpDropout     // inputs (x, seed I32 scalar); Attr: DropoutAttr{Rate}: keep mask from DropoutKeep(seed, i, rate)
	OpDropoutMask // inputs (like, seed); Attr: DropoutAttr: the mask, 0 or 1/(1-rate), in the dtype of "like" when it is a float type, else F32
	OpAssign      // inputs (variable, value): writes value into the variable; output aliases the variable
	OpSGDUpdate   // inputs (param var, grad, velocity var, lr scalar); Attr: SGDAttr; writes param, velocity
	OpAdamUpdate  // inputs (param var, grad, m var, v var, lr scalar, step scalar); Attr: AdamAttr; writes param, m, v

	// State-space and linear-attention recurrences (ops_ssm.go); each backward op
	// takes the forward's inputs and output gradient and returns every input's
	// gradient, flattened and concatenated.
	OpSSMConv     // inputs (x [B,T,D], w [D,K], state [B,K-1,D]) -> [B,T,D]
	OpSSMConvGrad // inputs (x, w, state, gy) -> [all gradients]
	OpSSMScan     // inputs (x, dt [B,T,D], A [D,N], B, C [B,T,N], h0 [B,D,N]) -> [B, T·D + D·N]
	OpSSMScanGrad
	OpWKV6 // inputs (r, k, v, w [B,T,H,S], u [H,S], s0 [B,H,S,S]) -> [B, T·H·S + H·S·S]
	OpWKV6Grad
	OpGLA // inputs (q, k, v, g [B,T,H,S], s0); Attr: GLAAttr{Scale}
	OpGLAGrad
	OpWKV7 // inputs (r, w, k, v, a, b [B,T,H,S], s0)
	OpWKV7Grad

	// Custom: a named host kernel registered with runtime.RegisterCustomOp.
	OpCustom       // n-ary floats; Attr: CustomAttr{Name, Shape, Params, InPlace}
	OpCustomAssign // inputs (variable, others...); Attr: CustomAttr: the kernel updates the variable in place

	numOps
)

// Kind groups ops so passes can ask about families rather than lists.
type Kind uint8

// The op kinds.
const (
	KindSource Kind = iota
	KindUnary
	KindBinary
	KindReduce
	KindMatMul
	KindConv
	KindNorm
	KindLayout
	KindTraining
	KindSSM
	KindCustom
	numKinds
)

var kindNames = [numKinds]string{"source", "unary", "binary", "reduce", "matmul", "conv", "norm", "layout", "training", "ssm", "custom"}

// String returns the kind's lower-case name ("unary", "reduce").
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// DTypeSet is a set of element types, one bit per DType.
type DTypeSet uint16

// The dtype sets the op table uses.
const (
	FloatTypes   DTypeSet = 1<<F32 | 1<<F16 | 1<<BF16
	IntTypes     DTypeSet = 1<<I32 | 1<<I64
	NumericTypes          = FloatTypes | IntTypes
	BoolType     DTypeSet = 1 << Bool
	AllTypes     DTypeSet = 1<<(Bool+1) - 1 // every type but the quantised ones
	QuantTypes   DTypeSet = 1<<Q4_0 | 1<<Q8_0 | 1<<Q4_K
)

// DTypes returns the set holding exactly dts.
func DTypes(dts ...DType) DTypeSet {
	var s DTypeSet
	for _, d := range dts {
		s |= 1 << d
	}
	return s
}

// Has reports whether d is in the set.
func (s DTypeSet) Has(d DType) bool { return d < numDTypes && s&(1<<d) != 0 }

// List returns the set's dtypes in DType order.
func (s DTypeSet) List() []DType {
	var out []DType
	for d := DType(0); d < numDTypes; d++ {
		if s.Has(d) {
			out = append(out, d)
		}
	}
	return out
}

// String lists the dtypes, "f32|f16|bf16", after the name of a named set:
// "floating-point (f32|f16|bf16)".
func (s DTypeSet) String() string {
	var names []string
	for _, d := range s.List() {
		names = append(names, d.String())
	}
	list := strings.Join(names, "|")
	switch s {
	case FloatTypes:
		return "floating-point (" + list + ")"
	case IntTypes:
		return "integer (" + list + ")"
	case NumericTypes:
		return "numeric (" + list + ")"
	case QuantTypes:
		return "quantised (" + list + ")"
	}
	return list
}

// Cost classes the work an op does per output element. Backends read it where a
// decision depends on how much arithmetic an element carries: how many elements a
// goroutine must get before a split pays, whether a small node is worth a launch.
type Cost uint8

// The cost classes, cheapest first.
const (
	CostFree    Cost = iota // no work: sources, and Reshape, which aliases its input
	CostMove                // copies elements without arithmetic (layout, indexing)
	CostCheap               // elementwise at about the price of a copy: add, relu, compare
	CostMath                // elementwise with a transcendental function or several steps: exp, gelu, the optimizer updates
	CostReduce              // reads many inputs per output: sums, scans, softmax, norms, pooling
	CostProduct             // multiply-adds that grow with an inner dimension: matmul, convolution, attention
)

// GPUKernel says how the Vulkan backend computes an op.
type GPUKernel struct {
	// Shader is the stem of the file in shaders/src that computes the op ("elementwise"
	// for elementwise.comp); its first word names the op's family, which is also the
	// suffix of the op's files in tensor (ops_*.go), runtime/cpu (kernels_*.go) and
	// gpu (ops_*.go). "" means the GPU has no kernel and the op runs on the CPU.
	Shader string
	// Codes name the op codes that select the op inside a shader that computes several
	// ops (its OP or MODE specialisation constant): the op's own name, unless its row
	// lists others (Gelu has one per form; the layout copies share "copy"). `make
	// generate` numbers them and writes them as Go constants (gpu/opcodes.go) and GLSL
	// macros (shaders/src/opcodes.glsl). Nil for shaders that select by flags or serve
	// a single op.
	Codes []string
}

// gpuInfo is the GPU column of the op table; coded marks a shader that selects the op
// by op code, whose codes default to the op's name.
type gpuInfo struct {
	shader string
	coded  bool
	codes  []string
}

// onShader is a shader that selects its ops by flags, or serves one op.
func onShader(name string) gpuInfo { return gpuInfo{shader: name} }

// coded is a shader that selects the op by op code: codes, or the op's name.
func coded(name string, codes ...string) gpuInfo {
	return gpuInfo{shader: name, coded: true, codes: codes}
}

// opInfo is one row of the op table.
type opInfo struct {
	name  string
	kind  Kind
	arity int // number of inputs; -1 means variadic, -2 means a range checked by the shape rule
	// dtypes is what input 0 may hold (for Where, the condition; for sources, the
	// value). Apply enforces it before the shape rule runs, and the CPU backend and
	// the case tables take from it which dtypes to serve and test.
	dtypes DTypeSet
	cost   Cost
	// inPlace lists inputs the op writes (optimizer updates, Assign); the runtime keeps
	// those buffers resident and orders the writes after every read of the old value.
	inPlace []int
	// noGrad says why no gradient flows through the op (a wrt node reached only
	// through it gets zeros); gradMissing says why Grad fails where a gradient would
	// have to pass through it. Every other computing op has a rule in grad_*.go.
	noGrad, gradMissing string
	gpu                 gpuInfo
}

// secondOrderSSM is why the state-space backward ops have no gradient.
const secondOrderSSM = "second-order gradients through the state-space and linear-attention recurrences are not implemented"

// Reasons for noGrad.
const (
	boolOut    = "boolean output"
	intOut     = "integer output"
	piecewise  = "piecewise constant: the derivative is zero wherever it exists"
	sideEffect = "side effect on a variable"
)

var opTable = [numOps]opInfo{
	OpInvalid:  {name: "invalid"},
	OpInput:    {name: "input", kind: KindSource, dtypes: AllTypes},
	OpConst:    {name: "const", kind: KindSource, dtypes: AllTypes},
	OpVariable: {name: "variable", kind: KindSource, dtypes: AllTypes},

	OpNeg:         {name: "neg", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpAbs:         {name: "abs", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpSign:        {name: "sign", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, noGrad: piecewise, gpu: coded("elementwise")},
	OpExp:         {name: "exp", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpLog:         {name: "log", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpSqrt:        {name: "sqrt", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpRsqrt:       {name: "rsqrt", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpSquare:      {name: "square", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpSin:         {name: "sin", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpCos:         {name: "cos", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpTanh:        {name: "tanh", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpSigmoid:     {name: "sigmoid", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpRelu:        {name: "relu", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpLeakyRelu:   {name: "leaky_relu", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpElu:         {name: "elu", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpGelu:        {name: "gelu", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise", "gelu", "gelu_tanh")},
	OpSilu:        {name: "silu", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpSoftplus:    {name: "softplus", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpSoftsign:    {name: "softsign", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpHardSigmoid: {name: "hardsigmoid", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpHardSwish:   {name: "hardswish", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpErf:         {name: "erf", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpFloor:       {name: "floor", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostCheap, noGrad: piecewise, gpu: coded("elementwise")},
	OpCeil:        {name: "ceil", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostCheap, noGrad: piecewise, gpu: coded("elementwise")},
	OpRound:       {name: "round", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostCheap, noGrad: piecewise, gpu: coded("elementwise")},
	OpTan:         {name: "tan", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpAtan:        {name: "atan", kind: KindUnary, arity: 1, dtypes: FloatTypes, cost: CostMath, gpu: coded("elementwise")},
	OpClamp:       {name: "clamp", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpScale:       {name: "scale", kind: KindUnary, arity: 1, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpNot:         {name: "not", kind: KindUnary, arity: 1, dtypes: BoolType, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpCast:        {name: "cast", kind: KindUnary, arity: 1, dtypes: AllTypes | QuantTypes, cost: CostCheap, gpu: onShader("cast")},

	OpAdd:          {name: "add", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpSub:          {name: "sub", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpMul:          {name: "mul", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpDiv:          {name: "div", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpPow:          {name: "pow", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostMath, gpu: coded("elementwise")},
	OpMod:          {name: "mod", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostMath, gpu: coded("elementwise")},
	OpMaximum:      {name: "maximum", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpMinimum:      {name: "minimum", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, gpu: coded("elementwise")},
	OpEqual:        {name: "equal", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpNotEqual:     {name: "not_equal", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpLess:         {name: "less", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpLessEqual:    {name: "less_equal", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpGreater:      {name: "greater", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpGreaterEqual: {name: "greater_equal", kind: KindBinary, arity: 2, dtypes: NumericTypes, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpAnd:          {name: "and", kind: KindBinary, arity: 2, dtypes: BoolType, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpOr:           {name: "or", kind: KindBinary, arity: 2, dtypes: BoolType, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpXor:          {name: "xor", kind: KindBinary, arity: 2, dtypes: BoolType, cost: CostCheap, noGrad: boolOut, gpu: coded("compare")},
	OpWhere:        {name: "where", kind: KindBinary, arity: 3, dtypes: BoolType, cost: CostCheap, gpu: coded("compare")},

	OpSum:    {name: "sum", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, gpu: coded("reduce")},
	OpMean:   {name: "mean", kind: KindReduce, arity: 1, dtypes: FloatTypes, cost: CostReduce, gpu: coded("reduce")},
	OpMax:    {name: "max", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, gpu: coded("reduce")},
	OpMin:    {name: "min", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, gpu: coded("reduce")},
	OpProd:   {name: "prod", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, gpu: coded("reduce")},
	OpVar:    {name: "var", kind: KindReduce, arity: 1, dtypes: FloatTypes, cost: CostReduce, gpu: coded("reduce_scan")},
	OpArgMax: {name: "argmax", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, noGrad: intOut, gpu: coded("reduce_scan")},
	OpArgMin: {name: "argmin", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, noGrad: intOut, gpu: coded("reduce_scan")},
	OpCumSum: {name: "cumsum", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, gpu: coded("reduce_scan")},
	OpTopK:   {name: "topk", kind: KindReduce, arity: 1, dtypes: NumericTypes, cost: CostReduce, noGrad: intOut, gpu: coded("reduce_scan")},

	OpMatMul: {name: "matmul", kind: KindMatMul, arity: 2, dtypes: FloatTypes | QuantTypes, cost: CostProduct, gpu: onShader("matmul_f32")},

	OpConv:           {name: "conv", kind: KindConv, arity: 2, dtypes: FloatTypes, cost: CostProduct, gpu: coded("conv")},
	OpConvTranspose:  {name: "conv_transpose", kind: KindConv, arity: 2, dtypes: FloatTypes, cost: CostProduct, gpu: coded("conv")},
	OpConvFilterGrad: {name: "conv_filter_grad", kind: KindConv, arity: 2, dtypes: FloatTypes, cost: CostProduct, gpu: coded("conv")},
	OpMaxPool:        {name: "max_pool", kind: KindConv, arity: 1, dtypes: FloatTypes, cost: CostReduce, gpu: coded("conv_pool")},
	OpAvgPool:        {name: "avg_pool", kind: KindConv, arity: 1, dtypes: FloatTypes, cost: CostReduce, gpu: coded("conv_pool")},
	OpMaxPoolGrad: {name: "max_pool_grad", kind: KindConv, arity: 2, dtypes: FloatTypes, cost: CostReduce,
		gradMissing: "second-order gradients through max pooling are not implemented", gpu: coded("conv_pool")},
	OpAvgPoolGrad: {name: "avg_pool_grad", kind: KindConv, arity: 1, dtypes: FloatTypes, cost: CostReduce, gpu: coded("conv_pool")},
	OpIm2Col:      {name: "im2col", kind: KindConv, arity: 1, dtypes: FloatTypes, cost: CostMove, gpu: onShader("conv_im2col")},

	OpSoftmax:       {name: "softmax", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostReduce, gpu: onShader("norm_softmax")},
	OpLogSoftmax:    {name: "log_softmax", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostReduce, gpu: onShader("norm_softmax")},
	OpLayerNorm:     {name: "layer_norm", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostReduce, gpu: onShader("norm")},
	OpRMSNorm:       {name: "rms_norm", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostReduce, gpu: onShader("norm")},
	OpAttention:     {name: "attention", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("attention")},
	OpAttentionGrad: {name: "attention_grad", kind: KindNorm, arity: -2, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("attention_bwd")},
	OpRoPE:          {name: "rope", kind: KindNorm, arity: 2, dtypes: FloatTypes, cost: CostMath, gpu: onShader("attention_rope")},

	OpReshape:      {name: "reshape", kind: KindLayout, arity: 1, dtypes: AllTypes | QuantTypes, cost: CostFree, gpu: coded("elementwise", "copy")},
	OpPermute:      {name: "permute", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: coded("elementwise", "copy")},
	OpConcat:       {name: "concat", kind: KindLayout, arity: -1, dtypes: AllTypes, cost: CostMove, gpu: onShader("layout")},
	OpSlice:        {name: "slice", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: onShader("layout")},
	OpPad:          {name: "pad", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: onShader("layout")},
	OpExpand:       {name: "expand", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: coded("elementwise", "copy")},
	OpTile:         {name: "tile", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: onShader("layout")},
	OpGather:       {name: "gather", kind: KindLayout, arity: 2, dtypes: AllTypes, cost: CostMove, gpu: coded("index")},
	OpTakeAlong:    {name: "take_along", kind: KindLayout, arity: 2, dtypes: AllTypes, cost: CostMove, gpu: coded("index")},
	OpScatter:      {name: "scatter", kind: KindLayout, arity: 3, dtypes: AllTypes, cost: CostMove, gpu: coded("index")},
	OpScatterAdd:   {name: "scatter_add", kind: KindLayout, arity: 3, dtypes: NumericTypes, cost: CostMove, gpu: onShader("index_add")},
	OpOneHot:       {name: "one_hot", kind: KindLayout, arity: 1, dtypes: IntTypes, cost: CostMove, noGrad: "indices in, constants out", gpu: coded("index")},
	OpDepthToSpace: {name: "depth_to_space", kind: KindLayout, arity: 1, dtypes: AllTypes, cost: CostMove, gpu: onShader("layout")},

	OpDropout:     {name: "dropout", kind: KindTraining, arity: 2, dtypes: FloatTypes, cost: CostMath, gpu: onShader("training_dropout")},
	OpDropoutMask: {name: "dropout_mask", kind: KindTraining, arity: 2, dtypes: AllTypes, cost: CostMath, noGrad: "depends only on the seed and the shape", gpu: onShader("training_dropout")},
	OpAssign:      {name: "assign", kind: KindTraining, arity: 2, dtypes: AllTypes, cost: CostMove, inPlace: []int{0}, noGrad: sideEffect, gpu: onShader("layout")},
	OpSGDUpdate:   {name: "sgd_update", kind: KindTraining, arity: 4, dtypes: FloatTypes, cost: CostMath, inPlace: []int{0, 2}, noGrad: sideEffect, gpu: onShader("training_optim")},
	OpAdamUpdate:  {name: "adam_update", kind: KindTraining, arity: 6, dtypes: FloatTypes, cost: CostMath, inPlace: []int{0, 2, 3}, noGrad: sideEffect, gpu: onShader("training_optim")},

	OpSSMConv:     {name: "ssm_conv", kind: KindSSM, arity: 3, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("ssm_conv")},
	OpSSMConvGrad: {name: "ssm_conv_grad", kind: KindSSM, arity: 4, dtypes: FloatTypes, cost: CostProduct, gradMissing: secondOrderSSM, gpu: onShader("ssm_conv")},
	OpSSMScan:     {name: "ssm_scan", kind: KindSSM, arity: 6, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("ssm_scan")},
	OpSSMScanGrad: {name: "ssm_scan_grad", kind: KindSSM, arity: 7, dtypes: FloatTypes, cost: CostProduct, gradMissing: secondOrderSSM, gpu: onShader("ssm_scan")},
	OpWKV6:        {name: "wkv6", kind: KindSSM, arity: 6, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("ssm_heads")},
	OpWKV6Grad:    {name: "wkv6_grad", kind: KindSSM, arity: 7, dtypes: FloatTypes, cost: CostProduct, gradMissing: secondOrderSSM, gpu: onShader("ssm_heads")},
	OpGLA:         {name: "gla", kind: KindSSM, arity: 5, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("ssm_heads")},
	OpGLAGrad:     {name: "gla_grad", kind: KindSSM, arity: 6, dtypes: FloatTypes, cost: CostProduct, gradMissing: secondOrderSSM, gpu: onShader("ssm_heads")},
	OpWKV7:        {name: "wkv7", kind: KindSSM, arity: 7, dtypes: FloatTypes, cost: CostProduct, gpu: onShader("ssm_heads")},
	OpWKV7Grad:    {name: "wkv7_grad", kind: KindSSM, arity: 8, dtypes: FloatTypes, cost: CostProduct, gradMissing: secondOrderSSM, gpu: onShader("ssm_heads")},

	// Custom kernels run on the CPU: the GPU has no way to call Go.
	OpCustom:       {name: "custom", kind: KindCustom, arity: -1, dtypes: FloatTypes, cost: CostReduce},
	OpCustomAssign: {name: "custom_assign", kind: KindCustom, arity: -1, dtypes: FloatTypes, cost: CostReduce, inPlace: []int{0}, noGrad: sideEffect},
}

// NumOps is the number of defined ops, for tables indexed by Op.
const NumOps = int(numOps)

// String returns the op's snake_case name ("matmul", "layer_norm").
func (o Op) String() string {
	if o < numOps && opTable[o].name != "" {
		return opTable[o].name
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Kind returns the op's family.
func (o Op) Kind() Kind { return opTable[o].kind }

// Arity is the number of inputs: -1 for variadic ops, -2 when the count is an
// op-specific range (optional inputs).
func (o Op) Arity() int { return opTable[o].arity }

// Writes lists the inputs an op updates in place (Assign and the optimizer updates).
func (o Op) Writes() []int { return opTable[o].inPlace }

// DTypes is the set of dtypes the op accepts for input 0 (for Where, the condition;
// for a source, its value). Building a node whose input 0 lies outside it fails.
func (o Op) DTypes() DTypeSet { return opTable[o].dtypes }

// Cost is the op's cost class.
func (o Op) Cost() Cost { return opTable[o].cost }

// GPU says which shader computes the op on the GPU, and with which op codes.
func (o Op) GPU() GPUKernel {
	g := opTable[o].gpu
	k := GPUKernel{Shader: g.shader, Codes: g.codes}
	if g.coded && len(k.Codes) == 0 {
		k.Codes = []string{opTable[o].name}
	}
	return k
}

// OpByName finds an op by its String name.
func OpByName(name string) (Op, bool) {
	for o := Op(1); o < numOps; o++ {
		if opTable[o].name == name {
			return o, true
		}
	}
	return OpInvalid, false
}

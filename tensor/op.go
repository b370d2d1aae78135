package tensor

import "strconv"

// Op is the operation a node performs. The set is one flat enumeration shared by every
// backend and by autodiff; opTable (below) holds each op's name, kind and arity, and
// the op files register its shape rule (ops_*.go) and gradient rule (grad*.go).
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
	OpHardSigmoid // Attr: HardSigmoidAttr{Alpha, Beta}: max(0, min(1, alpha*x+beta))
	OpHardSwish   // x * hardsigmoid(x) with alpha 1/6, beta 1/2
	OpErf
	OpFloor
	OpCeil
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
)

// opInfo is one row of the op table.
type opInfo struct {
	name  string
	kind  Kind
	arity int // number of inputs; -1 means variadic, -2 means a range checked by the shape rule
	// inPlace lists inputs the op writes (optimizer updates, Assign); the runtime keeps
	// those buffers resident and orders the writes after every read of the old value.
	inPlace []int
}

var opTable = [numOps]opInfo{
	OpInvalid:  {"invalid", KindSource, 0, nil},
	OpInput:    {"input", KindSource, 0, nil},
	OpConst:    {"const", KindSource, 0, nil},
	OpVariable: {"variable", KindSource, 0, nil},

	OpNeg: {"neg", KindUnary, 1, nil}, OpAbs: {"abs", KindUnary, 1, nil}, OpSign: {"sign", KindUnary, 1, nil},
	OpExp: {"exp", KindUnary, 1, nil}, OpLog: {"log", KindUnary, 1, nil}, OpSqrt: {"sqrt", KindUnary, 1, nil},
	OpRsqrt: {"rsqrt", KindUnary, 1, nil}, OpSquare: {"square", KindUnary, 1, nil},
	OpSin: {"sin", KindUnary, 1, nil}, OpCos: {"cos", KindUnary, 1, nil}, OpTanh: {"tanh", KindUnary, 1, nil},
	OpSigmoid: {"sigmoid", KindUnary, 1, nil}, OpRelu: {"relu", KindUnary, 1, nil},
	OpLeakyRelu: {"leaky_relu", KindUnary, 1, nil}, OpElu: {"elu", KindUnary, 1, nil},
	OpGelu: {"gelu", KindUnary, 1, nil}, OpSilu: {"silu", KindUnary, 1, nil},
	OpSoftplus: {"softplus", KindUnary, 1, nil}, OpHardSigmoid: {"hardsigmoid", KindUnary, 1, nil},
	OpHardSwish: {"hardswish", KindUnary, 1, nil}, OpErf: {"erf", KindUnary, 1, nil},
	OpFloor: {"floor", KindUnary, 1, nil}, OpCeil: {"ceil", KindUnary, 1, nil},
	OpClamp: {"clamp", KindUnary, 1, nil}, OpScale: {"scale", KindUnary, 1, nil},
	OpNot: {"not", KindUnary, 1, nil}, OpCast: {"cast", KindUnary, 1, nil},

	OpAdd: {"add", KindBinary, 2, nil}, OpSub: {"sub", KindBinary, 2, nil}, OpMul: {"mul", KindBinary, 2, nil},
	OpDiv: {"div", KindBinary, 2, nil}, OpPow: {"pow", KindBinary, 2, nil},
	OpMaximum: {"maximum", KindBinary, 2, nil}, OpMinimum: {"minimum", KindBinary, 2, nil},
	OpEqual: {"equal", KindBinary, 2, nil}, OpNotEqual: {"not_equal", KindBinary, 2, nil},
	OpLess: {"less", KindBinary, 2, nil}, OpLessEqual: {"less_equal", KindBinary, 2, nil},
	OpGreater: {"greater", KindBinary, 2, nil}, OpGreaterEqual: {"greater_equal", KindBinary, 2, nil},
	OpAnd: {"and", KindBinary, 2, nil}, OpOr: {"or", KindBinary, 2, nil}, OpXor: {"xor", KindBinary, 2, nil},
	OpWhere: {"where", KindBinary, 3, nil},

	OpSum: {"sum", KindReduce, 1, nil}, OpMean: {"mean", KindReduce, 1, nil}, OpMax: {"max", KindReduce, 1, nil},
	OpMin: {"min", KindReduce, 1, nil}, OpProd: {"prod", KindReduce, 1, nil}, OpVar: {"var", KindReduce, 1, nil},
	OpArgMax: {"argmax", KindReduce, 1, nil}, OpArgMin: {"argmin", KindReduce, 1, nil},
	OpCumSum: {"cumsum", KindReduce, 1, nil}, OpTopK: {"topk", KindReduce, 1, nil},

	OpMatMul: {"matmul", KindMatMul, 2, nil},

	OpConv: {"conv", KindConv, 2, nil}, OpConvTranspose: {"conv_transpose", KindConv, 2, nil},
	OpConvFilterGrad: {"conv_filter_grad", KindConv, 2, nil},
	OpMaxPool:        {"max_pool", KindConv, 1, nil}, OpAvgPool: {"avg_pool", KindConv, 1, nil},
	OpMaxPoolGrad: {"max_pool_grad", KindConv, 2, nil}, OpAvgPoolGrad: {"avg_pool_grad", KindConv, 1, nil},
	OpIm2Col: {"im2col", KindConv, 1, nil},

	OpSoftmax: {"softmax", KindNorm, -2, nil}, OpLogSoftmax: {"log_softmax", KindNorm, -2, nil},
	OpLayerNorm: {"layer_norm", KindNorm, -2, nil}, OpRMSNorm: {"rms_norm", KindNorm, -2, nil},
	OpAttention: {"attention", KindNorm, -2, nil}, OpAttentionGrad: {"attention_grad", KindNorm, -2, nil},
	OpRoPE: {"rope", KindNorm, 2, nil},

	OpReshape: {"reshape", KindLayout, 1, nil}, OpPermute: {"permute", KindLayout, 1, nil},
	OpConcat: {"concat", KindLayout, -1, nil}, OpSlice: {"slice", KindLayout, 1, nil},
	OpPad: {"pad", KindLayout, 1, nil}, OpExpand: {"expand", KindLayout, 1, nil},
	OpTile: {"tile", KindLayout, 1, nil}, OpGather: {"gather", KindLayout, 2, nil},
	OpTakeAlong: {"take_along", KindLayout, 2, nil}, OpScatter: {"scatter", KindLayout, 3, nil},
	OpScatterAdd: {"scatter_add", KindLayout, 3, nil}, OpOneHot: {"one_hot", KindLayout, 1, nil},
	OpDepthToSpace: {"depth_to_space", KindLayout, 1, nil},

	OpDropout: {"dropout", KindTraining, 2, nil}, OpDropoutMask: {"dropout_mask", KindTraining, 2, nil},
	OpAssign:     {"assign", KindTraining, 2, []int{0}},
	OpSGDUpdate:  {"sgd_update", KindTraining, 4, []int{0, 2}},
	OpAdamUpdate: {"adam_update", KindTraining, 6, []int{0, 2, 3}},
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

// OpByName finds an op by its String name.
func OpByName(name string) (Op, bool) {
	for o := Op(1); o < numOps; o++ {
		if opTable[o].name == name {
			return o, true
		}
	}
	return OpInvalid, false
}

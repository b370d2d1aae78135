package tensor

// Attribute structs: each op that has parameters stores one of these in Node.Attr.
// Backends type-assert the value for the op they implement. Axes stored here are
// already resolved to non-negative values by the builders.

import "fmt"

// AlphaAttr is the slope or scale parameter of LeakyRelu and Elu.
type AlphaAttr struct{ Alpha float32 }

// GeluForm selects the exact (erf) or tanh-approximated GELU.
type GeluForm uint8

// The GELU forms.
const (
	GeluErf GeluForm = iota
	GeluTanh
)

// GeluAttr is OpGelu's attribute.
type GeluAttr struct{ Form GeluForm }

// HardSigmoidAttr is max(0, min(1, Alpha*x + Beta)).
type HardSigmoidAttr struct{ Alpha, Beta float32 }

// ClampAttr limits values to [Min, Max].
type ClampAttr struct{ Min, Max float32 }

// ScaleAttr is x*Scale + Bias.
type ScaleAttr struct{ Scale, Bias float32 }

// CastAttr converts to dtype To.
type CastAttr struct{ To DType }

// ReduceAttr is the attribute of the reductions. Axes are sorted and unique; an empty list
// reduces over every axis. Correction is used by OpVar only (0 population, 1 sample).
type ReduceAttr struct {
	Axes       []int
	KeepDims   bool
	Correction int
}

// ArgReduceAttr is the attribute of ArgMax and ArgMin.
type ArgReduceAttr struct {
	Axis     int
	KeepDims bool
}

// CumSumAttr is OpCumSum's attribute.
type CumSumAttr struct {
	Axis               int
	Exclusive, Reverse bool
}

// TopKAttr selects the K largest (or smallest) along Axis, sorted.
type TopKAttr struct {
	K       int
	Axis    int
	Largest bool
}

// MatMul: C = op(A) @ op(B) where op transposes the last two axes when set.
// Precision F16 or BF16, on f32 operands, lets a backend round the operands to that
// type and accumulate in f32 (mixed precision); a backend without fast products of
// that type computes in f32. The zero value, F32, asks for f32 products.
// TF32, on f32 operands at F32 precision, lets a backend multiply in TensorFloat-32
// (f32's range with 10 bits of mantissa, f32 accumulation), as PyTorch's allow_tf32
// does; backends without TF32 units (the CPU, the Vulkan shaders) compute in f32.
type MatMulAttr struct {
	TransA, TransB bool
	Precision      DType
	TF32           bool
}

// ConvAttr describes a 1-D or 2-D convolution (len(Stride) spatial dims). Pads are given
// per spatial axis as begin and end values ("same" padding is resolved by the builder).
type ConvAttr struct {
	Stride        []int
	Dilation      []int
	PadBegin      []int
	PadEnd        []int
	OutputPadding []int // ConvTranspose only
	Groups        int
	FilterShape   Shape // ConvFilterGrad: the weight shape to produce; Im2Col: the kernel's spatial size only
}

// PoolAttr describes max or average pooling.
type PoolAttr struct {
	Kernel          []int
	Stride          []int
	PadBegin        []int
	PadEnd          []int
	CountIncludePad bool  // average pooling: divide by the full window even over padding
	InputShape      Shape // AvgPoolGrad only
}

// SoftmaxAttr is the attribute of Softmax and LogSoftmax: softmax(x*Scale + mask) on Axis.
// A Scale of 0 means 1.
type SoftmaxAttr struct {
	Axis  int
	Scale float32
}

// NormAttr is the attribute of LayerNorm and RMSNorm: normalise over the trailing Axes.
type NormAttr struct {
	Axes []int
	Eps  float32
}

// AttentionAttr is scaled dot-product attention softmax(q kᵀ * Scale + mask) v over
// (batch, heads, time, dim) inputs, or (batch, time, heads, dim) ones with Layout
// AttentionBTHD. A Scale of 0 means 1/sqrt(dim).
type AttentionAttr struct {
	Causal bool
	Scale  float32
	Layout AttentionLayout
}

// AttentionLayout is the order of the axes of attention's q, k, v and output, and of
// the backward's o, gy and gradients. Whatever the layout, a mask broadcasts to the
// scores' shape (..., H, Tq, Tk) and the backward's statistics are (..., H, Tq, 2).
type AttentionLayout uint8

const (
	// AttentionBHTD is (..., H, T, D): each head's rows are contiguous, as PyTorch's
	// scaled_dot_product_attention and ONNX Attention's 4-D form take them. The default.
	AttentionBHTD AttentionLayout = iota
	// AttentionBTHD is (..., T, H, D): each time step's row holds every head's features,
	// the layout of a (B, T, H*D) projection reshaped to (B, T, H, D) without a permute
	// (ONNX Attention's 3-D form). The kernels read the heads in place, so a model
	// saves the permutes to and from AttentionBHTD in the forward and the backward.
	AttentionBTHD
)

func (l AttentionLayout) String() string {
	switch l {
	case AttentionBHTD:
		return "bhtd"
	case AttentionBTHD:
		return "bthd"
	}
	return fmt.Sprintf("AttentionLayout(%d)", uint8(l))
}

// Split returns the geometry of an attention operand of shape s in layout l: its
// leading axes in the scores' order (the batch axes, then the heads: the axes a mask
// broadcasts over before (Tq, Tk)), the number of heads its rows interleave (H for
// AttentionBTHD, whose row at time t holds every head's features; 1 for AttentionBHTD),
// its rows (time) and its features. s must have the layout's rank (2, or 3 for
// AttentionBTHD) or more.
func (l AttentionLayout) Split(s Shape) (lead Shape, heads, rows, features int) {
	r := s.Rank()
	if l == AttentionBTHD {
		return append(s[:r-3:r-3], s[r-2]), s[r-2], s[r-3], s[r-1]
	}
	return s[:r-2], 1, s[r-2], s[r-1]
}

// rank is the least rank of an operand in layout l.
func (l AttentionLayout) rank() int {
	if l == AttentionBTHD {
		return 3
	}
	return 2
}

// AttentionGradOutput selects which result of attention's backward an OpAttentionGrad
// node computes. The three share the forward's inputs and differ in the rest.
type AttentionGradOutput uint8

// The results of OpAttentionGrad.
const (
	// AttentionStats: inputs (q, k, o, gy [, mask]) with o the forward's output and gy its
	// gradient; output (..., Tq, 2) holding, per query, the log-sum-exp of its scaled,
	// masked scores and the dot product of its rows of gy and o.
	AttentionStats AttentionGradOutput = iota
	// AttentionGradQ: inputs (q, k, v, gy, stats [, mask]); output ∂q, shaped like q.
	AttentionGradQ
	// AttentionGradKV: inputs (q, k, v, gy, stats [, mask]); output (..., Tk, D+Dv),
	// ∂k and ∂v side by side along the last axis.
	AttentionGradKV
)

// AttentionGradAttr is OpAttentionGrad's attribute: the forward's Causal, Scale (0
// means 1/sqrt(D)) and Layout, and the result the node computes.
type AttentionGradAttr struct {
	Causal bool
	Scale  float32
	Layout AttentionLayout
	Output AttentionGradOutput
}

// MaskInput is the index of the optional mask among the node's inputs: 4 for
// AttentionStats, 5 for the gradients.
func (a AttentionGradAttr) MaskInput() int {
	if a.Output == AttentionStats {
		return 4
	}
	return 5
}

// RoPEAttr rotates the first Dims features of each position pairwise (interleaved pairs
// (0,1), (2,3), ...) by angle pos * Base^(-2i/Dims). Dims 0 means the whole last axis.
type RoPEAttr struct {
	Base float32
	Dims int
}

// ReshapeAttr is the target shape of OpReshape and OpExpand (fully resolved, no -1).
type ReshapeAttr struct{ Shape Shape }

// PermuteAttr reorders axes: output axis i is input axis Perm[i].
type PermuteAttr struct{ Perm []int }

// AxisAttr is the attribute of ops with one axis parameter (Concat, Gather, TakeAlong).
type AxisAttr struct{ Axis int }

// SliceAttr selects Starts[i]:Ends[i]:Steps[i] on every axis i (resolved to the input's
// shape; steps may be negative, in which case Start > End).
type SliceAttr struct{ Starts, Ends, Steps []int }

// PadMode selects how Pad fills.
type PadMode uint8

// The pad modes.
const (
	PadConstant PadMode = iota
	PadReflect
	PadEdge
)

// PadAttr adds Before[i] and After[i] elements on axis i.
type PadAttr struct {
	Before, After []int
	Mode          PadMode
	Value         float32
}

// TileAttr repeats the input Reps[i] times along axis i.
type TileAttr struct{ Reps []int }

// ScatterReduce selects how Scatter combines.
type ScatterReduce uint8

// The scatter reductions.
const (
	ScatterReduceNone ScatterReduce = iota
	ScatterReduceAdd
)

// ScatterAttr is OpScatter's attribute.
type ScatterAttr struct {
	Axis   int
	Reduce ScatterReduce
}

// OneHotAttr expands indices to Depth classes of type DType (1 at the index, 0 elsewhere;
// an index outside [0, Depth) gives an all-zero row).
type OneHotAttr struct {
	Depth int
	DType DType
}

// DepthToSpaceAttr rearranges (N, C*b*b, H, W) to (N, C, H*b, W*b). Mode "DCR" or "CRD"
// as in ONNX.
type DepthToSpaceAttr struct {
	Block int
	Mode  string
}

// DropoutAttr zeroes each element with probability Rate and scales the rest by 1/(1-Rate).
type DropoutAttr struct{ Rate float32 }

// SGDAttr is the attribute of OpSGDUpdate: v = Momentum*v + g + WeightDecay*p;
// p -= lr * (Nesterov ? g + Momentum*v : v).
type SGDAttr struct {
	Momentum    float32
	WeightDecay float32
	Nesterov    bool
}

// AdamAttr is the attribute of OpAdamUpdate. With Decoupled (AdamW) the weight decay is
// applied as p -= lr*WeightDecay*p; otherwise it is added to the gradient.
type AdamAttr struct {
	Beta1, Beta2, Eps float32
	WeightDecay       float32
	Decoupled         bool
}

// Package tensor holds gml's data types and its one graph IR.
//
// Host data: Tensor is a dense row-major array in host memory (shapes outermost first,
// as NumPy), with constructors from []float32, []float64, [][]float64 and gonum
// matrices, and conversions back. DType covers F32 (the default), F16, BF16, I32, I64
// and Bool, and the block-quantised Q4_0, Q8_0 and Q4_K of ggml (layouts in
// tensor/quant): rows of blocks along the innermost axis, which MatMul multiplies with
// an f32 operand as they are and Cast decodes or encodes; no other op takes them.
//
// Graphs: a Graph records Nodes; building a node never computes anything. Each Node has
// one Op from a single flat enumeration (op.go), an output dtype and shape, inputs and
// an attribute struct (attrs.go). op.go's table is the one source of each op's facts
// (name, kind, arity, accepted dtypes, cost class, in-place inputs, why it has no
// gradient, the GPU shader and op codes), which backends and generators read instead
// of keeping lists of ops; Op's documentation has the recipe for adding an op. Every non-source op has one shape rule, registered in
// the ops_*.go files, and every node is built through Apply, so graph transforms
// (autodiff, ONNX import, lowering) rebuild nodes generically. Builders panic with
// *Error on misuse (shape mismatches are programming errors); Catch converts that panic
// into an error at API edges.
//
// Persistent state: a Variable (weights, optimizer moments, counters) lives in the
// runtime across graph runs and across graphs; graphs read it through Var nodes and
// update it with in-place ops (Assign, SGDUpdate, AdamUpdate), which the op table marks.
//
// Randomness inside graphs is counter-based (DropoutKeep): a pure function of a seed
// fed per run and the element index, so CPU and GPU agree and a step can be replayed.
//
// Autodiff is a graph transform (Grad): from a scalar loss node and a list of nodes to
// differentiate, it appends the backward nodes using one gradient rule per op.
// StopGradient marks a node Grad treats as a constant; it is a Reshape the runtime
// aliases, not an op of its own, because it changes what autodiff does, not what runs.
//
// Attention's backward is one op, OpAttentionGrad, whose attribute selects one of three
// results, because a node has one output and the FlashAttention-2 backward has three
// results that want two passes in opposite directions: per-query statistics (the
// log-sum-exp of the scores and Σ gy·o, (..., Tq, 2)), ∂q (a pass over the keys per
// query block) and ∂k with ∂v side by side (..., Tk, D+Dv) (a pass over the queries per
// key block, whose two products share the recomputed probabilities). Three ops in the
// enumeration would repeat one shape rule and decomposition; one node per gradient would
// compute the key pass twice; a single node packing all three would force every
// consumer to slice and compute ∂k and ∂v when only ∂q is wanted. The statistics are
// computed once and read by both passes, so no pass needs atomics or a Tq×Tk buffer.
// Its decomposition (decompose.go) is differentiated for second-order gradients.
//
// Attention takes its operands in one of two layouts (AttentionLayout): (..., H, T, D),
// and (..., T, H, D), where each time step's row holds every head, as a model's
// (B, T, H·D) projections are laid out; the kernels read the heads in place through
// row strides, which saves a transformer the permutes to and from heads-first form in
// the forward and the backward. Masks and the statistics stay in the scores' order,
// (..., H, Tq, ·), in both, so one mask serves either layout.
package tensor

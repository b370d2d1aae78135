package cm2

import "github.com/gml-dev/gml/internal/spirv"

// coop emits the cooperative-matrix part of the shader: its capabilities and types,
// tensor layouts, loads, the multiply-add and the store. Generate uses tensorCoop;
// the test substitutes scalar stand-ins that an older spirv-val understands.
type coop interface {
	// setup declares capabilities, extensions and types; it returns the element
	// type of A and B in memory.
	setup(g *gen) ID
	// layout returns a 2-D tensor layout of rows×cols elements with row stride
	// stride; clamp selects clamp mode Constant (zero outside) over Undefined.
	layout(g *gen, clamp bool, rows, cols, stride ID) ID
	// slice selects rows [r0, r0+rn) and columns [c0, c0+cn) of layout l.
	slice(g *gen, clamp bool, l, r0 ID, rn uint32, c0 ID, cn uint32) ID
	// load reads the matrix of the given use (spirv.CoopMatUse*) from the slice
	// sl of the array at ptr.
	load(g *gen, use uint32, ptr, sl ID) ID
	// mulAdd returns a·b + c.
	mulAdd(g *gen, a, b, c ID) ID
	// addScaled returns acc + s·x for accumulators acc and x and an f32 s.
	addScaled(g *gen, acc, x, s ID) ID
	// store writes the accumulator v to the slice sl of the array at ptr.
	store(g *gen, ptr, v, sl ID)
	// matType is the type load returns for a use.
	matType(use uint32) ID
	// accType and accZero are the accumulator type and its zero value.
	accType() ID
	accZero() ID
}

// tensorCoop emits workgroup-scope SPV_KHR_cooperative_matrix types with
// SPV_NV_cooperative_matrix2 tensor loads and stores (SPV_NV_tensor_addressing
// layouts).
type tensorCoop struct {
	mat   [3]ID // by use: A (BM×BK), B (BK×BN), accumulator (BM×BN)
	zero  [3]ID // zero matrices, the Object operand of clamped loads
	tl    [2]ID // tensor layout types: clamp Undefined, Constant
	elemT ID
}

func (t *tensorCoop) setup(g *gen) ID {
	m, c := g.m, g.c
	m.Capability(spirv.CapabilityCooperativeMatrixKHR)
	m.Capability(spirv.CapabilityCooperativeMatrixTensorAddressingNV)
	m.Capability(spirv.CapabilityTensorAddressingNV)
	m.Extension("SPV_KHR_cooperative_matrix")
	m.Extension("SPV_NV_cooperative_matrix2")
	m.Extension("SPV_NV_tensor_addressing")
	if c.Elem == "bf16" {
		// SPV_KHR_bfloat16: OpTypeFloat 16 with FP encoding BFloat16KHR.
		m.Capability(spirv.CapabilityBFloat16TypeKHR)
		m.Capability(spirv.CapabilityBFloat16CooperativeMatrixKHR)
		m.Extension("SPV_KHR_bfloat16")
		t.elemT = m.Type(spirv.OpTypeFloat, 16, spirv.FPEncodingBFloat16KHR)
	} else {
		m.Capability(spirv.CapabilityFloat16)
		t.elemT = m.Float(16)
	}
	scope := g.u(spirv.ScopeWorkgroup)
	// OpTypeCooperativeMatrixKHR: Component Type, Scope, Rows, Columns, Use, all
	// but the first constant ids (SPV_KHR_cooperative_matrix 3.42.6).
	mat := func(comp ID, rows, cols, use uint32) ID {
		return m.Type(spirv.OpTypeCooperativeMatrixKHR, uint32(comp), uint32(scope), uint32(g.u(rows)), uint32(g.u(cols)), uint32(g.u(use)))
	}
	t.mat[spirv.CoopMatUseA] = mat(t.elemT, c.BM, c.BK, spirv.CoopMatUseA)
	t.mat[spirv.CoopMatUseB] = mat(t.elemT, c.BK, c.BN, spirv.CoopMatUseB)
	t.mat[spirv.CoopMatUseAccumulator] = mat(g.f32, c.BM, c.BN, spirv.CoopMatUseAccumulator)
	// A cooperative-matrix OpConstantComposite has one constituent, replicated
	// (SPV_KHR_cooperative_matrix 3.42.7). 16-bit zeros are one word of 0.
	ez := m.Const(spirv.OpConstant, t.elemT, 0)
	t.zero[spirv.CoopMatUseA] = m.Const(spirv.OpConstantComposite, t.mat[spirv.CoopMatUseA], uint32(ez))
	t.zero[spirv.CoopMatUseB] = m.Const(spirv.OpConstantComposite, t.mat[spirv.CoopMatUseB], uint32(ez))
	t.zero[spirv.CoopMatUseAccumulator] = m.Const(spirv.OpConstantComposite, t.mat[spirv.CoopMatUseAccumulator], uint32(m.Float32(0)))
	// OpTypeTensorLayoutNV: Dim and ClampMode, both constant ids
	// (SPV_NV_tensor_addressing 3.49.6).
	for i, mode := range []uint32{spirv.TensorClampUndefined, spirv.TensorClampConstant} {
		t.tl[i] = m.Type(spirv.OpTypeTensorLayoutNV, uint32(g.u(2)), uint32(g.u(mode)))
	}
	return t.elemT
}

// layoutType is the tensor layout type of the given clamp choice.
func (t *tensorCoop) layoutType(clamp bool) ID {
	if clamp {
		return t.tl[1]
	}
	return t.tl[0]
}

func (t *tensorCoop) layout(g *gen, clamp bool, rows, cols, stride ID) ID {
	lt := t.layoutType(clamp)
	// OpCreateTensorLayoutNV zeroes dimensions, strides and the clamp value (so
	// Constant mode reads 0); OpTensorLayoutSetDimensionNV sets dimensions and spans
	// and packed strides, which OpTensorLayoutSetStrideNV then replaces
	// (SPV_NV_tensor_addressing "Tensor Layout and View Instructions").
	l := g.op(spirv.OpCreateTensorLayoutNV, lt)
	l = g.op(spirv.OpTensorLayoutSetDimensionNV, lt, l, rows, cols)
	return g.op(spirv.OpTensorLayoutSetStrideNV, lt, l, stride, g.u(1))
}

func (t *tensorCoop) slice(g *gen, clamp bool, l, r0 ID, rn uint32, c0 ID, cn uint32) ID {
	// Operands: TensorLayout, then Offset and Span per dimension.
	return g.op(spirv.OpTensorLayoutSliceNV, t.layoutType(clamp), l, r0, g.u(rn), c0, g.u(cn))
}

func (t *tensorCoop) load(g *gen, use uint32, ptr, sl ID) ID {
	// Result Type, Result, Pointer, Object, TensorLayout, Memory Operand literal,
	// Tensor Addressing Operands literal (SPV_NV_cooperative_matrix2 3.49.8).
	return g.f.Res(spirv.OpCooperativeMatrixLoadTensorNV, t.mat[use],
		uint32(ptr), uint32(t.zero[use]), uint32(sl), spirv.MemoryAccessNone, spirv.TensorAddressingNone)
}

func (t *tensorCoop) mulAdd(g *gen, a, b, c ID) ID {
	return g.op(spirv.OpCooperativeMatrixMulAddKHR, t.accType(), a, b, c)
}

func (t *tensorCoop) addScaled(g *gen, acc, x, s ID) ID {
	// SPV_KHR_cooperative_matrix allows OpMatrixTimesScalar and OpFAdd on matrices.
	return g.op(spirv.OpFAdd, t.accType(), acc, g.op(spirv.OpMatrixTimesScalar, t.accType(), x, s))
}

func (t *tensorCoop) store(g *gen, ptr, v, sl ID) {
	// Pointer, Object, TensorLayout, Memory Operand, Tensor Addressing Operands.
	g.f.Op(spirv.OpCooperativeMatrixStoreTensorNV, uint32(ptr), uint32(v), uint32(sl), spirv.MemoryAccessNone, spirv.TensorAddressingNone)
}

func (t *tensorCoop) matType(use uint32) ID { return t.mat[use] }
func (t *tensorCoop) accType() ID           { return t.mat[spirv.CoopMatUseAccumulator] }
func (t *tensorCoop) accZero() ID           { return t.zero[spirv.CoopMatUseAccumulator] }

package cm2

import (
	"fmt"

	"github.com/gml-dev/gml/internal/spirv"
)

// Config selects one generated matrix-product module.
type Config struct {
	Elem       string // "f16" or "bf16": the element type of A and B
	BM, BN, BK uint32 // workgroup tile: BM×BN of C per workgroup, BK of K per step
	Threads    uint32 // invocations per workgroup (local_size_x)
	Unroll     uint32 // steps of BK per loop iteration on the unchecked path
	// Prefetch loads the next slabs of A and B before multiplying the current ones
	// (on the unchecked path), so that their loads overlap the multiply.
	Prefetch bool
	// GroupM > 0 walks output tiles in column groups GroupM tiles tall, so that
	// workgroups running together share slabs of A and B in the L2 cache.
	GroupM uint32
}

// Name is the module's variant name (its SPIR-V file is spv/Name.spv):
// matmul_cm2_ELEM_BMxBNxBK, then a suffix for each choice that differs from 256
// threads, unroll 4, no prefetch and no grouping (_tTHREADS, _uUNROLL, _p, _gGROUPM).
func (c Config) Name() string {
	s := fmt.Sprintf("matmul_cm2_%s_%dx%dx%d", c.Elem, c.BM, c.BN, c.BK)
	if c.Threads != 256 {
		s += fmt.Sprintf("_t%d", c.Threads)
	}
	if c.Unroll != 4 {
		s += fmt.Sprintf("_u%d", c.Unroll)
	}
	if c.Prefetch {
		s += "_p"
	}
	if c.GroupM > 0 {
		s += fmt.Sprintf("_g%d", c.GroupM)
	}
	return s
}

// check reports configurations the generator cannot express.
func (c Config) check() error {
	if c.Elem != "f16" && c.Elem != "bf16" {
		return fmt.Errorf("cm2: element type %q: want f16 or bf16", c.Elem)
	}
	for _, d := range []uint32{c.BM, c.BN, c.BK} {
		if d == 0 || d%16 != 0 {
			return fmt.Errorf("cm2: tile %dx%dx%d: every dimension must be a positive multiple of 16", c.BM, c.BN, c.BK)
		}
	}
	if c.Threads == 0 || c.Threads%32 != 0 || c.Threads > 1024 {
		return fmt.Errorf("cm2: %d threads: want a multiple of 32 up to 1024", c.Threads)
	}
	if c.Unroll == 0 {
		return fmt.Errorf("cm2: unroll must be at least 1")
	}
	return nil
}

// Generate returns the SPIR-V module for c.
func Generate(c Config) ([]byte, error) {
	return generate(c, &tensorCoop{})
}

// Push-constant members (src/matmul_common.glsl): twelve uints, the float beta,
// then kChunk and splits, each 4 bytes at offset 4·index.
const (
	pushM = iota
	pushN
	pushK
	pushLda
	pushLdb
	pushLdc
	pushOffA
	pushOffB
	pushOffC
	pushSA
	pushSB
	pushSC
	pushBeta
	pushKChunk
	pushSplits
	pushCount
)

// gen holds the ids the main function is built from.
type gen struct {
	c    Config
	m    *spirv.Module
	f    *spirv.Func
	coop coop

	u32, f32, boolT ID
	push            ID // push-constant variable
}

// ID is a SPIR-V id.
type ID = spirv.ID

// u returns the uint constant v.
func (g *gen) u(v uint32) ID { return g.m.Uint32(v) }

// op emits a result-producing instruction whose operands are all ids.
func (g *gen) op(o spirv.Op, t ID, args ...ID) ID {
	w := make([]uint32, len(args))
	for i, a := range args {
		w[i] = uint32(a)
	}
	return g.f.Res(o, t, w...)
}

// pushU loads push-constant member i as a uint.
func (g *gen) pushU(i uint32) ID {
	ptr := g.op(spirv.OpAccessChain, g.m.Pointer(spirv.StoragePushConstant, g.u32), g.push, g.u(i))
	return g.f.Load(g.u32, ptr)
}

func generate(c Config, co coop) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	m := spirv.New(spirv.Version16)
	g := &gen{c: c, m: m, coop: co}

	// Vulkan memory model: SPV_KHR_cooperative_matrix requires it with Shader (core
	// in SPIR-V 1.5+, so no extension).
	m.Capability(spirv.CapabilityShader)
	m.Capability(spirv.CapabilityVulkanMemoryModel)
	m.Capability(spirv.CapabilityStorageBuffer16BitAccess)
	m.MemoryModel(spirv.AddressingLogical, spirv.MemoryModelVulkan)
	g.u32, g.f32, g.boolT = m.Uint(32), m.Float(32), m.Bool()
	elem := co.setup(g)

	// Bindings 0 and 1: read-only runtime arrays of 16-bit elements; binding 2: f32.
	ab := m.Struct(m.RuntimeArray(elem, 2))
	m.Decorate(ab, spirv.DecorationBlock)
	m.MemberDecorate(ab, 0, spirv.DecorationOffset, 0)
	m.MemberDecorate(ab, 0, spirv.DecorationNonWritable)
	cs := m.Struct(m.RuntimeArray(g.f32, 4))
	m.Decorate(cs, spirv.DecorationBlock)
	m.MemberDecorate(cs, 0, spirv.DecorationOffset, 0)
	vars := [3]ID{}
	for i, s := range []ID{ab, ab, cs} {
		vars[i] = m.Variable(m.Pointer(spirv.StorageStorageBuffer, s), spirv.StorageStorageBuffer)
		m.Decorate(vars[i], spirv.DecorationDescriptorSet, 0)
		m.Decorate(vars[i], spirv.DecorationBinding, uint32(i))
	}
	members := make([]ID, pushCount)
	for i := range members {
		members[i] = g.u32
	}
	members[pushBeta] = g.f32
	ps := m.Struct(members...)
	m.Decorate(ps, spirv.DecorationBlock)
	for i := range members {
		m.MemberDecorate(ps, uint32(i), spirv.DecorationOffset, uint32(4*i))
	}
	g.push = m.Variable(m.Pointer(spirv.StoragePushConstant, ps), spirv.StoragePushConstant)
	v3 := m.Vector(g.u32, 3)
	wg := m.Variable(m.Pointer(spirv.StorageInput, v3), spirv.StorageInput)
	m.Decorate(wg, spirv.DecorationBuiltIn, spirv.BuiltInWorkgroupID)
	iface := []ID{vars[0], vars[1], vars[2], g.push, wg}
	var nwg ID
	if c.GroupM > 0 {
		nwg = m.Variable(m.Pointer(spirv.StorageInput, v3), spirv.StorageInput)
		m.Decorate(nwg, spirv.DecorationBuiltIn, spirv.BuiltInNumWorkgroups)
		iface = append(iface, nwg)
	}

	g.f = m.Function(m.Void(), m.FuncType(m.Void()))
	g.body(vars, wg, nwg, v3, elem)
	g.f.End()
	main := g.f.ID()
	m.EntryPoint(spirv.ExecutionModelGLCompute, main, "main", iface...)
	// The workgroup size must precede workgroup-scope matrix types
	// (SPV_NV_cooperative_matrix2 2.16.1); the execution-mode section does.
	m.ExecutionMode(main, spirv.ExecutionModeLocalSize, c.Threads, 1, 1)
	m.Name(main, "main")
	return m.Bytes()
}

// body emits main: tile coordinates, base pointers, the K loop on one of two paths,
// the optional beta·C term, and the store.
func (g *gen) body(vars [3]ID, wg, nwg, v3, elem ID) {
	f, c := g.f, g.c
	M, N, K := g.pushU(pushM), g.pushU(pushN), g.pushU(pushK)
	lda, ldb, ldc := g.pushU(pushLda), g.pushU(pushLdb), g.pushU(pushLdc)
	betaPtr := g.op(spirv.OpAccessChain, g.m.Pointer(spirv.StoragePushConstant, g.f32), g.push, g.u(pushBeta))
	beta := f.Load(g.f32, betaPtr)

	id := f.Load(v3, wg)
	ext := func(i uint32) ID { return f.Res(spirv.OpCompositeExtract, g.u32, uint32(id), i) }
	tn, tm, z := ext(0), ext(1), ext(2)
	if c.GroupM > 0 {
		tm, tn = g.group(f.Load(v3, nwg), tm, tn)
	}
	m0 := g.op(spirv.OpIMul, g.u32, tm, g.u(c.BM))
	n0 := g.op(spirv.OpIMul, g.u32, tn, g.u(c.BN))
	// base returns a pointer to element off + z·stride of binding v.
	base := func(v, t ID, off, stride uint32) ID {
		e := g.op(spirv.OpIAdd, g.u32, g.pushU(off), g.op(spirv.OpIMul, g.u32, z, g.pushU(stride)))
		return g.op(spirv.OpAccessChain, g.m.Pointer(spirv.StorageStorageBuffer, t), v, g.u(0), e)
	}
	pa := base(vars[0], elem, pushOffA, pushSA)
	pb := base(vars[1], elem, pushOffB, pushSB)
	pc := base(vars[2], g.f32, pushOffC, pushSC)

	acc := f.Var(g.coop.accType())
	f.Store(acc, g.coop.accZero())
	k := f.Var(g.u32)
	f.Store(k, g.u(0))

	// The unchecked path: the tile lies inside M×N, K is a multiple of BK and both
	// row strides are multiples of 8 elements (16 bytes).
	ule := func(a, b ID) ID { return g.op(spirv.OpULessThanEqual, g.boolT, a, b) }
	and := func(a, b ID) ID { return g.op(spirv.OpLogicalAnd, g.boolT, a, b) }
	isZero := func(a ID) ID { return g.op(spirv.OpIEqual, g.boolT, a, g.u(0)) }
	inside := and(ule(g.op(spirv.OpIAdd, g.u32, m0, g.u(c.BM)), M), ule(g.op(spirv.OpIAdd, g.u32, n0, g.u(c.BN)), N))
	aligned := isZero(g.op(spirv.OpBitwiseAnd, g.u32, g.op(spirv.OpBitwiseOr, g.u32, lda, ldb), g.u(7)))
	fast := and(and(inside, isZero(g.op(spirv.OpUMod, g.u32, K, g.u(c.BK)))), aligned)

	// slabs loads the slabs of A and B at k.
	slabs := func(clamp bool, la, lb, kk ID) (a, b ID) {
		sa := g.coop.slice(g, clamp, la, m0, c.BM, kk, c.BK)
		sb := g.coop.slice(g, clamp, lb, kk, c.BK, n0, c.BN)
		return g.coop.load(g, spirv.CoopMatUseA, pa, sa), g.coop.load(g, spirv.CoopMatUseB, pb, sb)
	}
	mulAdd := func(a, b ID) {
		f.Store(acc, g.coop.mulAdd(g, a, b, f.Load(g.coop.accType(), acc)))
	}
	// step multiplies n slabs starting at k and advances k.
	step := func(clamp bool, la, lb ID, n uint32) {
		for range n {
			kk := f.Load(g.u32, k)
			mulAdd(slabs(clamp, la, lb, kk))
			f.Store(k, g.op(spirv.OpIAdd, g.u32, kk, g.u(c.BK)))
		}
	}
	// loop runs body(n) while k + n·BK <= K, or < K when ahead (the slabs at k are
	// already loaded, so only the n after them must exist).
	loop := func(n uint32, ahead bool, body func(n uint32)) {
		cmp := spirv.OpULessThanEqual
		if ahead {
			cmp = spirv.OpULessThan
		}
		f.Loop(spirv.LoopControlNone,
			func() ID {
				end := f.Load(g.u32, k)
				if n > 0 {
					end = g.op(spirv.OpIAdd, g.u32, end, g.u(n*c.BK))
				}
				return g.op(cmp, g.boolT, end, K)
			},
			func() { body(n) },
			func() {})
	}
	// unrolled runs body(Unroll) as long as it can, then body(1).
	unrolled := func(ahead bool, body func(n uint32)) {
		if c.Unroll > 1 {
			loop(c.Unroll, ahead, body)
		}
		loop(1, ahead, body)
	}
	if c.Prefetch {
		// The prefetching loop multiplies the last slabs after it ends, so it needs
		// at least one.
		fast = and(fast, g.op(spirv.OpINotEqual, g.boolT, K, g.u(0)))
	}
	f.IfElse(fast, func() {
		mask := g.u(^uint32(7))
		la := g.coop.layout(g, false, M, K, g.op(spirv.OpBitwiseAnd, g.u32, lda, mask))
		lb := g.coop.layout(g, false, K, N, g.op(spirv.OpBitwiseAnd, g.u32, ldb, mask))
		if !c.Prefetch {
			unrolled(false, func(n uint32) { step(false, la, lb, n) })
			return
		}
		va, vb := f.Var(g.coop.matType(spirv.CoopMatUseA)), f.Var(g.coop.matType(spirv.CoopMatUseB))
		a, b := slabs(false, la, lb, g.u(0))
		f.Store(va, a)
		f.Store(vb, b)
		unrolled(true, func(n uint32) {
			for range n {
				next := g.op(spirv.OpIAdd, g.u32, f.Load(g.u32, k), g.u(c.BK))
				a, b := slabs(false, la, lb, next)
				mulAdd(f.Load(g.coop.matType(spirv.CoopMatUseA), va), f.Load(g.coop.matType(spirv.CoopMatUseB), vb))
				f.Store(va, a)
				f.Store(vb, b)
				f.Store(k, next)
			}
		})
		mulAdd(f.Load(g.coop.matType(spirv.CoopMatUseA), va), f.Load(g.coop.matType(spirv.CoopMatUseB), vb))
	}, func() {
		la := g.coop.layout(g, true, M, K, lda)
		lb := g.coop.layout(g, true, K, N, ldb)
		// K need not be a multiple of BK here: the last slab reads zeros past K.
		loop(0, true, func(uint32) { step(true, la, lb, 1) })
	})

	lc := g.coop.layout(g, true, M, N, ldc)
	sc := g.coop.slice(g, true, lc, m0, c.BM, n0, c.BN)
	nonzero := g.op(spirv.OpFUnordNotEqual, g.boolT, beta, g.m.Float32(0))
	f.If(nonzero, func() {
		old := g.coop.load(g, spirv.CoopMatUseAccumulator, pc, sc)
		f.Store(acc, g.coop.addScaled(g, f.Load(g.coop.accType(), acc), old, beta))
	})
	g.coop.store(g, pc, f.Load(g.coop.accType(), acc), sc)
	f.Op(spirv.OpReturn)
}

// group remaps workgroup (tm, tn) so that consecutive workgroups walk a column group
// of GroupM tile rows before moving right: the ones in flight together then read
// the same few slabs of A and B, which stay in the L2 cache.
func (g *gen) group(num, tm, tn ID) (ID, ID) {
	f := g.f
	nx := f.Res(spirv.OpCompositeExtract, g.u32, uint32(num), 0)
	ny := f.Res(spirv.OpCompositeExtract, g.u32, uint32(num), 1)
	gm := g.u(g.c.GroupM)
	pid := g.op(spirv.OpIAdd, g.u32, g.op(spirv.OpIMul, g.u32, tm, nx), tn)
	width := g.op(spirv.OpIMul, g.u32, gm, nx)
	first := g.op(spirv.OpIMul, g.u32, g.op(spirv.OpUDiv, g.u32, pid, width), gm)
	left := g.op(spirv.OpISub, g.u32, ny, first)
	size := g.op(spirv.OpSelect, g.u32, g.op(spirv.OpULessThan, g.boolT, left, gm), left, gm)
	in := g.op(spirv.OpUMod, g.u32, pid, width)
	return g.op(spirv.OpIAdd, g.u32, first, g.op(spirv.OpUMod, g.u32, in, size)), g.op(spirv.OpUDiv, g.u32, in, size)
}

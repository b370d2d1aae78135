package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/shaders"
	"github.com/gml-dev/gml/shaders/cm2"
)

// DType is the element type of matrix-product inputs. Outputs are always f32.
type DType int

// Input element types.
const (
	F32 DType = iota
	F16
	BF16
)

func (t DType) String() string {
	switch t {
	case F32:
		return "f32"
	case F16:
		return "f16"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("DType(%d)", int(t))
}

// Size is the element size in bytes.
func (t DType) Size() int {
	if t == F32 {
		return 4
	}
	return 2
}

// Tile overrides the tiled shaders' block sizes (for tuning): BM×BN outputs per
// workgroup, BK deep slabs; TM×TN outputs per thread (f32) or WM×WN per subgroup
// (cooperative matrix). WarpN (f32) is how many threads of a 32-wide subgroup lie
// along N; the others lie along M. GroupM (cooperative matrix) orders workgroups in
// column groups of that many tiles for L2 reuse (0: row by row).
type Tile struct {
	BM, BN, BK     uint32
	TM, TN, WM, WN uint32
	WarpN, GroupM  uint32
}

// MatMul describes C = op(A)·op(B) + Beta·C for Batch matrices, where op transposes
// when TransA/TransB is set. A is M×K (K×M stored when TransA), B is K×N (N×K when
// TransB), C is M×N, all row-major with leading dimensions LDA, LDB, LDC (0 means
// dense). Batch matrices follow each other densely, except that BroadcastA/BroadcastB
// reuse one matrix for every batch.
type MatMul struct {
	M, N, K, Batch         int
	TransA, TransB         bool
	BroadcastA, BroadcastB bool
	A, B, C                *Buffer
	LDA, LDB, LDC          int
	Beta                   float32
	Input                  DType
	// Tile, when set, replaces the automatic choice of block sizes.
	Tile *Tile
	// Shader, when set, forces a cooperative-matrix shader variant (for tuning); Tile
	// then gives its specialisation constants.
	Shader string
	// Label names the dispatch in profiles; "matmul" when empty.
	Label string
	// TF32 lets an f32 product round its operands to TensorFloat-32 (f32's range, 10
	// bits of mantissa) where an outside library runs it (cuBLASLt); the shaders
	// multiply in f32 regardless.
	TF32 bool
}

type mmPush struct {
	m, n, k, lda, ldb, ldc, offA, offB, offC, sA, sB, sC uint32
	beta                                                 float32
	kChunk, splits                                       uint32
}

func (p mmPush) bytes() []byte {
	if p.splits == 0 {
		p.kChunk, p.splits = p.k, 1
	}
	w := []uint32{p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.offA, p.offB, p.offC, p.sA, p.sB, p.sC, math.Float32bits(p.beta), p.kChunk, p.splits}
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// layout fills the default batch count and leading dimensions, checks the sizes, and
// returns each operand's stride between batch matrices in elements (0 for a broadcast
// operand). It looks at no buffer, so that callers whose buffers hold other types than
// MatMul's (the engine's 16-bit outputs) share it.
func (p *MatMul) layout() (sA, sB, sC int, err error) {
	if p.Batch == 0 {
		p.Batch = 1
	}
	if p.M <= 0 || p.N <= 0 || p.K <= 0 || p.Batch < 0 {
		return 0, 0, 0, fmt.Errorf("gpu: matmul needs positive sizes, got M=%d N=%d K=%d batch=%d", p.M, p.N, p.K, p.Batch)
	}
	ar, ac := p.rowsA()
	br, bc := p.rowsB()
	if p.LDA == 0 {
		p.LDA = ac
	}
	if p.LDB == 0 {
		p.LDB = bc
	}
	if p.LDC == 0 {
		p.LDC = p.N
	}
	if p.LDA < ac || p.LDB < bc || p.LDC < p.N {
		return 0, 0, 0, fmt.Errorf("gpu: matmul leading dimensions (%d, %d, %d) smaller than rows (%d, %d, %d)", p.LDA, p.LDB, p.LDC, ac, bc, p.N)
	}
	sA, sB, sC = ar*p.LDA, br*p.LDB, p.M*p.LDC
	if p.BroadcastA {
		sA = 0
	}
	if p.BroadcastB {
		sB = 0
	}
	return sA, sB, sC, nil
}

// rowsA returns the rows and columns of A as stored.
func (p *MatMul) rowsA() (rows, cols int) {
	if p.TransA {
		return p.K, p.M
	}
	return p.M, p.K
}

// rowsB returns the rows and columns of B as stored.
func (p *MatMul) rowsB() (rows, cols int) {
	if p.TransB {
		return p.N, p.K
	}
	return p.K, p.N
}

// normalize fills default strides and checks that every operand fits its buffer.
func (p *MatMul) normalize() (mmPush, error) {
	sA, sB, sC, err := p.layout()
	if err != nil {
		return mmPush{}, err
	}
	if p.A == nil || p.B == nil || p.C == nil {
		return mmPush{}, fmt.Errorf("gpu: matmul needs buffers A, B and C")
	}
	ar, ac := p.rowsA()
	br, bc := p.rowsB()
	es := p.Input.Size()
	need := func(name string, b *Buffer, stride, rows, ld, cols, size int) error {
		n := (p.Batch-1)*stride + (rows-1)*ld + cols
		if uint64(n*size) > b.size {
			return fmt.Errorf("gpu: matmul operand %s needs %d bytes, its buffer has %d", name, n*size, b.size)
		}
		if uint64(n) > math.MaxUint32 {
			return fmt.Errorf("gpu: matmul operand %s has %d elements, more than 32-bit indexing allows", name, n)
		}
		return nil
	}
	if err := need("A", p.A, sA, ar, p.LDA, ac, es); err != nil {
		return mmPush{}, err
	}
	if err := need("B", p.B, sB, br, p.LDB, bc, es); err != nil {
		return mmPush{}, err
	}
	if err := need("C", p.C, sC, p.M, p.LDC, p.N, 4); err != nil {
		return mmPush{}, err
	}
	return mmPush{
		m: uint32(p.M), n: uint32(p.N), k: uint32(p.K), lda: uint32(p.LDA), ldb: uint32(p.LDB), ldc: uint32(p.LDC),
		offA: uint32(p.A.off / uint64(es)), offB: uint32(p.B.off / uint64(es)), offC: uint32(p.C.off / 4),
		sA: uint32(sA), sB: uint32(sB), sC: uint32(sC), beta: p.Beta,
	}, nil
}

// f32 tiles, by preference for big products. Measured on the H200 at n=4096 (TFLOP/s,
// double-buffered slabs): untransposed 128x128x16 with 8x4 per thread (512 threads)
// 37.8, 8x8 (256 threads) 32.3; B transposed 8x8 39.3, 8x4 31.7; A transposed 8x8
// 41.9-42.3, 8x4 39.0. BK=8 and 128x64 tiles were 1-10% slower. At n=1024 (64 such
// tiles) 128x128 tiles leave most of the GPU idle, hence the tile-count thresholds.
var (
	tileF32Wide  = Tile{BM: 128, BN: 128, BK: 16, TM: 8, TN: 4, WarpN: 8}
	tileF32Deep  = Tile{BM: 128, BN: 128, BK: 16, TM: 8, TN: 8, WarpN: 8}
	tileF32Large = Tile{BM: 128, BN: 64, BK: 16, TM: 8, TN: 4, WarpN: 8}
	tileF32Small = Tile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4, WarpN: 8}
	// 128x128x32 with 64x64 per subgroup and workgroups in groups of 8 tile rows: 177.5
	// TFLOP/s on the H200 at n=4096 (64x32 per subgroup 165; 128x256x16 and 128x128x16
	// with 64x64 below 65, 128x128x16 with 32x32 93). Loading fragments straight from
	// global memory without shared staging reached only 35, float16_t instead of uvec4
	// shared arrays 157.
	tileCoop = Tile{BM: 128, BN: 128, BK: 32, WM: 64, WN: 64, GroupM: 8}
	// With fewer than 256 such tiles (n=1024: 64) the GPU is better filled by 64x128
	// tiles of four subgroups: 91.7 TFLOP/s f16 at n=1024, against 58.1 for the big
	// tile and 87.4 for 64x64.
	tileCoopSmall = Tile{BM: 64, BN: 128, BK: 32, WM: 32, WN: 64}
)

// f32Tile picks the tile for an f32 product: the first of its preferences that fits
// the device (lavapipe, for one, has 32 KiB of shared memory).
func f32Tile(d *Device, p MatMul) Tile {
	var prefs []Tile
	switch tiles := (p.M / 128) * (p.N / 128) * p.Batch; {
	case tiles >= 256 && (p.TransA || p.TransB):
		prefs = []Tile{tileF32Deep, tileF32Wide, tileF32Large}
	case tiles >= 256:
		prefs = []Tile{tileF32Wide, tileF32Deep, tileF32Large}
	case tiles >= 32:
		prefs = []Tile{tileF32Large}
	}
	for _, t := range prefs {
		if t.checkF32(d) == nil {
			return t
		}
	}
	return tileF32Small
}

// ErrUnsupported is wrapped when a device or shape has no shader for an operation.
var ErrUnsupported = fmt.Errorf("gpu: unsupported on this device")

// MatMul records the product described by p into r: through the device's outside
// library when it has one and the product is big enough (fastmatmul.go), else on the
// shaders.
func (r *Recorder) MatMul(p MatMul) error {
	if ok, err := r.fastMatMul(p); ok || err != nil {
		return err
	}
	return r.matMulShaders(p)
}

// matMulShaders records the product described by p on the shaders.
func (r *Recorder) matMulShaders(p MatMul) error {
	push, err := p.normalize()
	if err != nil {
		return err
	}
	label := p.Label
	if label == "" {
		label = "matmul"
	}
	d := r.d
	switch p.Input {
	case F32:
		if p.M <= 8 && !p.TransA && p.Tile == nil && (!p.TransB || p.N <= maxGroups) {
			k, err := d.Kernel("matmul_vec_f32", 3, 256, 8, b32(p.TransB))
			if err != nil {
				return err
			}
			groups := [3]uint32{uint32((p.N + 255) / 256), 1, uint32(p.Batch)}
			if p.TransB {
				groups[0] = uint32(p.N)
			}
			return r.Dispatch(k, groups, push.bytes(), label, In(p.A), In(p.B), Out(p.C))
		}
		t := f32Tile(d, p)
		if p.Tile != nil {
			t = *p.Tile
		}
		if err := t.checkF32(d); err != nil {
			return err
		}
		vec := push.lda%4 == 0 && push.ldb%4 == 0 && push.sA%4 == 0 && push.sB%4 == 0 && push.offA%4 == 0 && push.offB%4 == 0
		if p.TransA {
			vec = vec && p.M%4 == 0
		} else {
			vec = vec && p.K%4 == 0
		}
		if p.TransB {
			vec = vec && p.K%4 == 0
		} else {
			vec = vec && p.N%4 == 0
		}
		threads := (t.BM / t.TM) * (t.BN / t.TN)
		k, err := d.Kernel(tiledShader("matmul_f32", t.BM, t.BN, t.BK, t.TM, t.TN), 3, threads, t.BM, t.BN, t.BK, t.TM, t.TN, b32(p.TransA), b32(p.TransB), b32(vec), t.WarpN)
		if err != nil {
			return err
		}
		groups := [3]uint32{ceilDiv(p.N, t.BN), ceilDiv(p.M, t.BM), uint32(p.Batch)}
		if splits := splitK(p, t, groups); splits > 1 {
			return r.matMulSplitK(k, p, push, groups, splits, t.BK, label)
		}
		return r.Dispatch(k, groups, push.bytes(), label, In(p.A), In(p.B), Out(p.C))
	case F16, BF16:
		c, err := coopMat2Shader(d.Info, p, push)
		if err != nil {
			return err
		}
		if c.Elem != "" {
			k, err := d.Kernel(c.Name(), 3, c.Threads)
			if err == nil {
				groups := [3]uint32{ceilDiv(p.N, c.BN), ceilDiv(p.M, c.BM), uint32(p.Batch)}
				return r.Dispatch(k, groups, push.bytes(), label, In(p.A), In(p.B), Out(p.C))
			}
			// A driver may list the extension yet reject this tile (its flexible
			// dimensions differ): unless the shader was asked for, the subgroup-scope
			// shader runs instead.
			if p.Shader != "" {
				return err
			}
		}
		shader, err := coopShader(d.Info, p.Input)
		if err != nil {
			return err
		}
		if p.Shader != "" {
			shader = p.Shader
		}
		if p.TransA || p.TransB || p.K%8 != 0 || p.N%8 != 0 || push.lda%8 != 0 || push.ldb%8 != 0 || push.sA%8 != 0 || push.sB%8 != 0 || push.offA%8 != 0 || push.offB%8 != 0 {
			return fmt.Errorf("%w: %s matmul needs untransposed operands with K, N and strides multiples of 8 (M=%d N=%d K=%d)", ErrUnsupported, p.Input, p.M, p.N, p.K)
		}
		t := tileCoop
		if ceilDiv(p.M, 128)*ceilDiv(p.N, 128)*uint32(p.Batch) < 256 {
			t = tileCoopSmall
		}
		if p.Tile != nil {
			t = *p.Tile
		}
		if err := t.checkCoop(d); err != nil {
			return err
		}
		threads := (t.BM / t.WM) * (t.BN / t.WN) * 32
		k, err := d.Kernel(tiledShader(shader, t.BM, t.BN, t.BK, t.WM, t.WN), 3, threads, t.BM, t.BN, t.BK, t.WM, t.WN, t.GroupM)
		if err != nil {
			return err
		}
		groups := [3]uint32{ceilDiv(p.N, t.BN), ceilDiv(p.M, t.BM), uint32(p.Batch)}
		return r.Dispatch(k, groups, push.bytes(), label, In(p.A), In(p.B), Out(p.C))
	}
	return fmt.Errorf("gpu: matmul input type %v", p.Input)
}

// tiledShader returns the variant of shader with this tile compiled in when there is
// one (see shaders/variants.go), else shader itself, specialised at pipeline creation.
func tiledShader(shader string, bm, bn, bk, tm, tn uint32) string {
	if name := fmt.Sprintf("%s_%dx%dx%d_%dx%d", shader, bm, bn, bk, tm, tn); shaders.Has(name) {
		return name
	}
	return shader
}

// splitK returns how many slices to split K into when the output alone gives too few
// workgroups to fill a GPU (a small batch times a wide weight matrix): each slice gets
// at least four slabs, and the slices multiply the workgroups to about 64.
func splitK(p MatMul, t Tile, groups [3]uint32) int {
	wgs := int(groups[0] * groups[1] * groups[2])
	if wgs >= 32 || p.Beta != 0 || p.LDC != p.N || p.Tile != nil {
		return 1
	}
	s := min((64+wgs-1)/wgs, p.K/(4*int(t.BK)), 32)
	if s*wgs > maxGroups {
		return 1
	}
	return max(s, 1)
}

// matMulSplitK computes slices of K into a scratch buffer and sums them into C.
func (r *Recorder) matMulSplitK(k *Kernel, p MatMul, push mmPush, groups [3]uint32, splits int, bk uint32, label string) error {
	chunk := (p.K + splits - 1) / splits
	chunk = (chunk + int(bk) - 1) / int(bk) * int(bk)
	splits = (p.K + chunk - 1) / chunk
	slice := p.M * p.N
	scratch, err := r.scratchBuffer(uint64(4 * splits * slice * p.Batch))
	if err != nil {
		return err
	}
	push.kChunk, push.splits = uint32(chunk), uint32(splits)
	push.offC, push.sC, push.ldc = f32Off(scratch), uint32(splits*slice), uint32(p.N)
	groups[2] *= uint32(splits)
	if err := r.Dispatch(k, groups, push.bytes(), label, In(p.A), In(p.B), Out(scratch)); err != nil {
		return err
	}
	return r.reduceColumns(reduceSum, p.Batch, splits, slice, scratch, p.C, label)
}

// coopMat2Tile names the workgroup-scope (VK_NV_cooperative_matrix2) variant, of 128
// invocations (see shaders/cm2): 256 TFLOP/s f16 on the H200 at n=4096 against 177 for
// the subgroup-scope shader; at n=1024 its 64 tiles are too few to fill the GPU (a
// 256-invocation 128x128 tile gave 75 there against 92 for the subgroup-scope shader).
const coopMat2Tile = "128x128x32_t128"

// coopMat2Shader returns the configuration of the workgroup-scope cooperative-matrix
// variant for p, for products of at least 256 tiles of 128x128 on a device with
// VK_NV_cooperative_matrix2 (Vulkan 1.3) whose operands start on the 16-byte boundaries
// its tensor loads need. It returns the zero Config (and the subgroup-scope shader runs) for
// other products, and when p asks for a subgroup-scope shader or tile. A Shader override
// naming such a variant (matmul_cm2_...) picks it at any size, or fails with the
// requirement it does not meet.
func coopMat2Shader(in Info, p MatMul, push mmPush) (cm2.Config, error) {
	forced := strings.HasPrefix(p.Shader, "matmul_cm2_")
	var name string
	switch {
	case forced:
		name = p.Shader
	case p.Shader != "" || p.Tile != nil || ceilDiv(p.M, 128)*ceilDiv(p.N, 128)*uint32(p.Batch) < 256:
		return cm2.Config{}, nil
	default:
		name = "matmul_cm2_" + p.Input.String() + "_" + coopMat2Tile
	}
	var why string
	c, ok := shaders.GeneratedConfig(name)
	switch {
	case !ok:
		why = "no such shader"
	case c.Elem != p.Input.String():
		why = "the shader is not for " + p.Input.String() + " inputs"
	case in.CoopMat2MaxWorkgroup < c.Threads || in.CoopMat2MaxDimension < max(c.BM, c.BN, c.BK) || in.apiVersion < vk.MakeVersion(1, 3, 0):
		why = in.Name + " lacks VK_NV_cooperative_matrix2 workgroup-scope matrices of that size (or Vulkan 1.3)"
	case p.Input == BF16 && !in.BF16:
		why = in.Name + " lacks bfloat16 cooperative matrices"
	case p.TransA || p.TransB:
		why = "transposed operands are not supported"
	case push.offA%8 != 0 || push.offB%8 != 0 || push.offC%4 != 0 || p.Batch > 1 && (push.sA%8 != 0 || push.sB%8 != 0 || push.sC%4 != 0):
		why = "operands must start on 16-byte boundaries (offsets and batch strides of A and B multiples of 8 elements, of C of 4)"
	}
	switch {
	case why == "":
		return c, nil
	case forced:
		return cm2.Config{}, fmt.Errorf("%w: %s: %s", ErrUnsupported, name, why)
	}
	return cm2.Config{}, nil
}

// coopShader picks the cooperative-matrix variant for the input type: the NV 16x8x16
// shape (fastest on NVIDIA) when present, else 16x16x16.
func coopShader(in Info, t DType) (string, error) {
	if in.SubgroupSize != 32 {
		return "", fmt.Errorf("%w: %s matmul needs NV cooperative matrices with 32-wide subgroups (%s has %d)", ErrUnsupported, t, in.Name, in.SubgroupSize)
	}
	switch {
	case in.HasCoopMat(false, 16, 8, 16, "f16", "f32"):
		if t == BF16 {
			return "matmul_coop_bf16_16x8x16", nil
		}
		return "matmul_coop_f16_16x8x16", nil
	case in.HasCoopMat(false, 16, 16, 16, "f16", "f32") && t == F16:
		return "matmul_coop_f16_16x16x16", nil
	}
	return "", fmt.Errorf("%w: %s has no NV cooperative matrix with f16 inputs and f32 accumulation", ErrUnsupported, in.Name)
}

func (t Tile) checkF32(d *Device) error {
	if t.TM%4 != 0 || t.TN%4 != 0 || t.TM == 0 || t.TN == 0 || t.BM%t.TM != 0 || t.BN%t.TN != 0 || t.BK%4 != 0 {
		return fmt.Errorf("gpu: f32 tile %+v: TM, TN, BK must be multiples of 4 dividing BM, BN", t)
	}
	if t.WarpN == 0 || 32%t.WarpN != 0 || (t.BN/t.TN)%t.WarpN != 0 || (t.BM/t.TM)%(32/t.WarpN) != 0 {
		return fmt.Errorf("gpu: f32 tile %+v: WarpN must divide 32 and the threads along N, and 32/WarpN the threads along M", t)
	}
	threads := (t.BM / t.TM) * (t.BN / t.TN)
	shared := 2 * 4 * t.BK * (t.BM + t.BN + 8)
	if threads > d.Info.MaxInvocations || shared > d.Info.SharedMemory {
		return fmt.Errorf("gpu: f32 tile %+v does not fit the device (%d threads, %d bytes shared)", t, threads, shared)
	}
	return nil
}

func (t Tile) checkCoop(d *Device) error {
	if t.WM == 0 || t.WN == 0 || t.BM%t.WM != 0 || t.BN%t.WN != 0 || t.WM%16 != 0 || t.WN%16 != 0 || t.BK%16 != 0 {
		return fmt.Errorf("gpu: cooperative tile %+v: WM, WN, BK must be multiples of 16 dividing BM, BN", t)
	}
	warps := (t.BM / t.WM) * (t.BN / t.WN)
	shared := 2*16*(t.BM*(t.BK/8+1)+t.BK*(t.BN/8+1)) + warps*16*16*4
	if warps*32 > d.Info.MaxInvocations || shared > d.Info.SharedMemory {
		return fmt.Errorf("gpu: cooperative tile %+v does not fit the device (%d threads, %d bytes shared)", t, warps*32, shared)
	}
	return nil
}

func b32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func ceilDiv(a int, b uint32) uint32 { return uint32((a + int(b) - 1) / int(b)) }

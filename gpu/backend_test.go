package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// openBackend opens the Vulkan backend, skipping only when Vulkan is absent.
func openBackend(t *testing.T) *Backend {
	t.Helper()
	d := openTest(t)
	return &Backend{d: d}
}

// runGPU computes outputs on the Vulkan backend the way cputest does on the CPU: every
// node gets its own buffer except Reshape and in-place updates, which alias.
// The first run is profiled; a second, plain run (twice true) must give the same result.
func runGPU(t *testing.T, be *Backend, outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor, twice bool) []*tensor.Tensor {
	t.Helper()
	g := outputs[0].Graph()
	need := make([]bool, g.Len())
	for _, o := range outputs {
		need[o.ID()] = true
	}
	all := g.Nodes()
	for i := len(all) - 1; i >= 0; i-- {
		if need[i] {
			for _, x := range all[i].Inputs() {
				need[x.ID()] = true
			}
		}
	}
	seg := &runtime.Segment{Buffers: map[*tensor.Node]runtime.Buffer{}}
	var owned []runtime.Buffer
	defer func() {
		for _, b := range owned {
			be.Free(b)
		}
	}()
	for i, n := range all {
		if !need[i] {
			continue
		}
		if !be.Supports(n) {
			t.Fatalf("the Vulkan backend does not support %v", n)
		}
		seg.Nodes = append(seg.Nodes, n)
		if n.Op() == tensor.OpReshape {
			seg.Buffers[n] = seg.Buffers[n.Input(0)]
			continue
		}
		if w := n.Op().Writes(); len(w) > 0 {
			seg.Buffers[n] = seg.Buffers[n.Input(w[0])]
			continue
		}
		b, err := be.Alloc(int64(n.Shape().Size()*n.DType().Size()), runtime.PoolActivations)
		if err != nil {
			t.Fatal(err)
		}
		owned = append(owned, b)
		seg.Buffers[n] = b
		var src *tensor.Tensor
		switch n.Op() {
		case tensor.OpInput:
			src = feeds[n]
		case tensor.OpVariable:
			src = n.Variable().Init()
		}
		if src != nil {
			if err := be.Upload(b, src.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
	}
	prog, err := be.Prepare(seg)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	prof := runtime.NewProfile()
	if err := prog.Run(prof); err != nil {
		t.Fatal(err)
	}
	if len(prof.Stats()) == 0 && len(seg.Nodes) > len(feeds) {
		t.Errorf("a profiled run recorded no op times")
	}
	if twice {
		if err := prog.Run(nil); err != nil {
			t.Fatal(err)
		}
	}
	res := make([]*tensor.Tensor, len(outputs))
	for i, o := range outputs {
		res[i] = tensor.New(o.DType(), o.Shape()...)
		if err := be.Download(seg.Buffers[o], res[i].Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

func randInput(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, lo, hi float64, shape ...int) *tensor.Node {
	x := g.Input(fmt.Sprint("x", len(feeds)), tensor.F32, shape...)
	data := make([]float32, tensor.Shape(shape).Size())
	for i := range data {
		data[i] = float32(lo + (hi-lo)*r.Float64())
	}
	t, err := tensor.FromFloat32s(tensor.Shape(shape), data)
	if err != nil {
		panic(err)
	}
	feeds[x] = t
	return x
}

func TestBackendUnary(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name   string
		build  func(x *tensor.Node) *tensor.Node
		lo, hi float64
	}{
		{"neg", tensor.Neg, -2, 2}, {"abs", tensor.Abs, -2, 2}, {"sign", tensor.Sign, -2, 2},
		{"exp", tensor.Exp, -2, 2}, {"log", tensor.Log, 0.1, 3}, {"sqrt", tensor.Sqrt, 0, 3},
		{"rsqrt", tensor.Rsqrt, 0.1, 3}, {"square", tensor.Square, -2, 2}, {"sin", tensor.Sin, -3, 3},
		{"cos", tensor.Cos, -3, 3}, {"tanh", tensor.Tanh, -3, 3}, {"sigmoid", tensor.Sigmoid, -6, 6},
		{"relu", tensor.Relu, -2, 2},
		{"leaky_relu", func(x *tensor.Node) *tensor.Node { return tensor.LeakyRelu(x, 0.1) }, -2, 2},
		{"elu", func(x *tensor.Node) *tensor.Node { return tensor.Elu(x, 1.5) }, -2, 2},
		{"gelu_erf", func(x *tensor.Node) *tensor.Node { return tensor.Gelu(x, tensor.GeluErf) }, -3, 3},
		{"gelu_tanh", func(x *tensor.Node) *tensor.Node { return tensor.Gelu(x, tensor.GeluTanh) }, -3, 3},
		{"silu", tensor.Silu, -4, 4}, {"softplus", tensor.Softplus, -20, 20},
		{"hardsigmoid", func(x *tensor.Node) *tensor.Node { return tensor.HardSigmoid(x, 0.2, 0.5) }, -4, 4},
		{"hardswish", tensor.HardSwish, -4, 4}, {"erf", tensor.Erf, -2, 2},
		{"floor", tensor.Floor, -3, 3}, {"ceil", tensor.Ceil, -3, 3}, {"round", tensor.Round, -4, 4},
		{"tan", tensor.Tan, -1.2, 1.2}, {"atan", tensor.Atan, -4, 4},
		{"clamp", func(x *tensor.Node) *tensor.Node { return tensor.Clamp(x, -0.5, 1) }, -2, 2},
		{"scale", func(x *tensor.Node) *tensor.Node { return tensor.ScaleBias(x, 3, -1) }, -2, 2},
	}
	for _, c := range cases {
		for _, shape := range [][]int{{3, 5}, {}, {70001}} {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			x := randInput(g, r, feeds, c.lo, c.hi, shape...)
			compareWithCPU(t, be, fmt.Sprint(c.name, shape), 2e-6, []*tensor.Node{c.build(x)}, feeds)
		}
	}
}

func TestBackendBinaryBroadcast(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(7, 8))
	shapes := [][2][]int{
		{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 2}}, {{1}, {3, 1}},
		{{3, 1, 2, 1}, {1, 4, 1, 5}}, {{300, 200}, {200}}, {{5, 1}, {}}, {{2, 3, 1, 2, 3, 1, 2}, {3, 2, 1, 1, 2}},
	}
	builds := map[string]func(a, b *tensor.Node) *tensor.Node{
		"add": tensor.Add, "sub": tensor.Sub, "mul": tensor.Mul, "div": tensor.Div,
		"pow": tensor.Pow, "mod": tensor.Mod, "maximum": tensor.Maximum, "minimum": tensor.Minimum,
	}
	for name, build := range builds {
		for _, sh := range shapes {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			a := randInput(g, r, feeds, 0.1, 2, sh[0]...)
			b := randInput(g, r, feeds, 0.1, 2, sh[1]...)
			compareWithCPU(t, be, fmt.Sprint(name, sh), 2e-6, []*tensor.Node{build(a, b)}, feeds)
		}
	}
}

// TestBackendPowNegativeBase checks C's pow where GLSL's is undefined: a negative base
// with an integral exponent, and a zero base.
func TestBackendPowNegativeBase(t *testing.T) {
	be := openBackend(t)
	g := tensor.NewGraph()
	a := g.Input("a", tensor.F32, 6)
	b := g.Input("b", tensor.F32, 6)
	av, _ := tensor.FromFloat32s(tensor.Shape{6}, []float32{-2, -1.5, -3, 0, 0, 2})
	bv, _ := tensor.FromFloat32s(tensor.Shape{6}, []float32{3, 2, -1, 2, 0, 0.5})
	compareWithCPU(t, be, "pow", 2e-6, []*tensor.Node{tensor.Pow(a, b)}, map[*tensor.Node]*tensor.Tensor{a: av, b: bv})
}

func TestBackendLayout(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(15, 16))
	cases := []struct {
		name  string
		shape []int
		f     func(x *tensor.Node) *tensor.Node
	}{
		{"expand_row", []int{1, 7}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpExpand, tensor.ReshapeAttr{Shape: tensor.Shape{5, 7}}, x)
		}},
		{"expand_scalar", []int{}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpExpand, tensor.ReshapeAttr{Shape: tensor.Shape{3, 2}}, x)
		}},
		{"permute_2d", []int{33, 17}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpPermute, tensor.PermuteAttr{Perm: []int{1, 0}}, x)
		}},
		{"permute_4d", []int{2, 3, 1, 5}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpPermute, tensor.PermuteAttr{Perm: []int{3, 1, 0, 2}}, x)
		}},
		{"reshape_then_add", []int{4, 6}, func(x *tensor.Node) *tensor.Node { return tensor.Add(tensor.Reshape(x, 6, 4), tensor.Reshape(x, 6, 4)) }},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -2, 2, c.shape...)
		compareWithCPU(t, be, c.name, 0, []*tensor.Node{c.f(x)}, feeds)
	}
}

// TestBackendMatMul compares products with the CPU backend's: f32 on every device;
// f32 products that allow f16 or bf16 precision; and f16 and bf16 ones (cast from f32
// inputs, the result cast back), which every device runs: on cooperative matrices
// where it has them for the type and shape, else widened to f32. Cases cover
// transposes, batches, broadcast operands, sizes that are not multiples of a tile or
// of 8 (batched ones included, which the cooperative shaders cannot address), and an
// empty K. The mixed products round their operands however small they are.
func TestBackendMatMul(t *testing.T) {
	be := openBackend(t)
	roundEveryProduct(t)
	r := rand.New(rand.NewPCG(9, 10))
	cases := []struct {
		a, b           []int
		transA, transB bool
	}{
		{[]int{3, 4}, []int{4, 5}, false, false},
		{[]int{37, 29}, []int{29, 41}, false, false},
		{[]int{2, 5, 7}, []int{7, 3}, false, false},
		{[]int{2, 5, 7}, []int{2, 7, 3}, false, false},
		{[]int{7, 5}, []int{2, 3, 7}, true, true},
		{[]int{4, 2, 9, 6}, []int{6, 11}, false, false},
		{[]int{130, 70}, []int{90, 70}, false, true},
		{[]int{64, 32}, []int{32, 48}, false, false},
		{[]int{3, 24, 32}, []int{32, 16}, false, false},
		{[]int{40, 64}, []int{40, 24}, true, false},
		{[]int{72, 16}, []int{40, 16}, false, true},
		{[]int{2, 16, 40}, []int{2, 24, 16}, true, true},
		{[]int{16, 24}, []int{3, 24, 32}, false, false},
		{[]int{8, 0}, []int{0, 16}, false, false},
		// Big enough for A to be transposed first (transposeFirst), through the tall
		// path of a batched A times an unbatched B.
		{[]int{2, 512, 256}, []int{256, 1024}, false, false},
	}
	// f16 keeps 11 significant bits, bf16 8: the GPU and the CPU may round a sum of the
	// same products differently by one unit in the last place.
	tols := map[tensor.DType]float64{tensor.F32: 1e-5, tensor.F16: 2e-3, tensor.BF16: 1e-2}
	for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16} {
		for _, c := range cases {
			name := fmt.Sprint(dt, " matmul", c)
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			a := randInput(g, r, feeds, -1, 1, c.a...)
			b := randInput(g, r, feeds, -1, 1, c.b...)
			if dt == tensor.F32 {
				compareWithCPU(t, be, name, tols[dt], []*tensor.Node{tensor.MatMulT(a, b, c.transA, c.transB)}, feeds)
				continue
			}
			// f32 operands with the precision allowed: run everywhere, on cooperative
			// matrices where the device has them (the CPU computes in f32).
			mixed := tensor.MatMulWith(a, b, tensor.MatMulAttr{TransA: c.transA, TransB: c.transB, Precision: dt})
			compareWithCPU(t, be, "mixed "+name, tols[dt], []*tensor.Node{mixed}, feeds)
			mm := tensor.MatMulT(tensor.Cast(a, dt), tensor.Cast(b, dt), c.transA, c.transB)
			if !be.Supports(mm) {
				t.Errorf("%s: declined on %s", name, be.d.Info.Name)
				continue
			}
			compareWithCPU(t, be, name, tols[dt], []*tensor.Node{tensor.Cast(mm, tensor.F32)}, feeds)
		}
	}
}

func TestBackendReduceSoftmaxNorm(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(11, 12))
	type build func(x *tensor.Node) *tensor.Node
	cases := []struct {
		name  string
		shape []int
		f     build
	}{
		{"sum_all", []int{7, 9}, func(x *tensor.Node) *tensor.Node { return tensor.Sum(x, nil, false) }},
		{"sum_rows", []int{7, 300}, func(x *tensor.Node) *tensor.Node { return tensor.Sum(x, []int{1}, false) }},
		{"sum_cols", []int{300, 7}, func(x *tensor.Node) *tensor.Node { return tensor.Sum(x, []int{0}, true) }},
		// Long columns are cut into chunks combined by a second pass.
		{"sum_cols_chunked", []int{1000, 70}, func(x *tensor.Node) *tensor.Node { return tensor.Sum(x, []int{0}, false) }},
		{"mean_cols_chunked", []int{3, 700, 33}, func(x *tensor.Node) *tensor.Node { return tensor.Mean(x, []int{1}, false) }},
		{"max_cols_chunked", []int{513, 5}, func(x *tensor.Node) *tensor.Node { return tensor.Max(x, []int{0}, true) }},
		{"mean_mid", []int{3, 4, 5, 6}, func(x *tensor.Node) *tensor.Node { return tensor.Mean(x, []int{1, 2}, false) }},
		{"max_last", []int{5, 1, 33}, func(x *tensor.Node) *tensor.Node { return tensor.Max(x, []int{2}, true) }},
		{"sum_bias_grad", []int{3, 4, 5, 6}, func(x *tensor.Node) *tensor.Node { return tensor.Sum(x, []int{0, 2, 3}, true) }},
		{"min_interleaved", []int{2, 3, 4, 5, 6}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpMin, tensor.ReduceAttr{Axes: []int{1, 3}}, x)
		}},
		{"prod_first", []int{3, 1, 7}, func(x *tensor.Node) *tensor.Node {
			return tensor.Apply(tensor.OpProd, tensor.ReduceAttr{Axes: []int{0}}, x)
		}},
		{"mean_outer_inner", []int{2, 3, 4}, func(x *tensor.Node) *tensor.Node { return tensor.Mean(x, []int{0, 2}, false) }},
		{"softmax", []int{6, 77}, func(x *tensor.Node) *tensor.Node { return tensor.Softmax(x, 1) }},
		{"log_softmax", []int{2, 3, 1000}, func(x *tensor.Node) *tensor.Node { return tensor.LogSoftmax(x, -1) }},
		{"softmax_mid_axis", []int{4, 37, 6}, func(x *tensor.Node) *tensor.Node { return tensor.Softmax(x, 1) }},
		{"layernorm", []int{4, 5, 33}, func(x *tensor.Node) *tensor.Node { return tensor.LayerNorm(x, nil, nil, []int{2}, 1e-5) }},
		{"rmsnorm", []int{9, 64}, func(x *tensor.Node) *tensor.Node { return tensor.RMSNorm(x, nil, []int{1}, 1e-6) }},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -2, 2, c.shape...)
		compareWithCPU(t, be, c.name, 1e-5, []*tensor.Node{c.f(x)}, feeds)
	}
	for _, mc := range []struct {
		x, mask []int
		axis    int
	}{
		{[]int{2, 3, 5, 5}, []int{5, 5}, -1},
		{[]int{2, 3, 5, 7}, []int{2, 1, 1, 7}, 3},
		{[]int{4, 6, 3}, []int{6, 1}, 1},
		{[]int{3, 8}, []int{3, 8}, 1},
	} {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -2, 2, mc.x...)
		m := randInput(g, r, feeds, -3, 0, mc.mask...)
		compareWithCPU(t, be, fmt.Sprint("softmax_masked", mc), 1e-5, []*tensor.Node{tensor.SoftmaxMasked(x, m, mc.axis, 0.5)}, feeds)
	}
	g := tensor.NewGraph()
	feeds := map[*tensor.Node]*tensor.Tensor{}
	x := randInput(g, r, feeds, -2, 2, 6, 2, 40)
	gamma := randInput(g, r, feeds, 0.5, 1.5, 2, 40)
	beta := randInput(g, r, feeds, -1, 1, 2, 40)
	compareWithCPU(t, be, "layernorm_affine", 1e-5, []*tensor.Node{tensor.LayerNorm(x, gamma, beta, []int{1, 2}, 1e-5), tensor.RMSNorm(x, gamma, []int{1, 2}, 1e-5)}, feeds)
}

func TestBackendOptimizers(t *testing.T) {
	// Staged, as on a discrete GPU: feeds, variables and constants go through deferred
	// uploads that must land before the recording runs.
	be := &Backend{d: openStaged(t)}
	r := rand.New(rand.NewPCG(13, 14))
	mk := func(n int) *tensor.Tensor {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(r.NormFloat64())
		}
		t, _ := tensor.FromFloat32s(tensor.Shape{n}, d)
		return t
	}
	for _, adam := range []bool{false, true} {
		const n = 1000
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		grad := randInput(g, r, feeds, -1, 1, n)
		p := g.Var(tensor.NewVariable("p", mk(n)))
		m := g.Var(tensor.NewVariable("m", mk(n)))
		v := g.Var(tensor.NewVariable("v", tensor.New(tensor.F32, n)))
		lr := g.Scalar(tensor.F32, 0.01)
		var upd *tensor.Node
		if adam {
			upd = tensor.AdamUpdate(p, grad, m, v, lr, g.Scalar(tensor.F32, 3), tensor.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Decoupled: true})
		} else {
			upd = tensor.SGDUpdate(p, grad, m, lr, tensor.SGDAttr{Momentum: 0.9, WeightDecay: 1e-4, Nesterov: true})
		}
		want, err := cputest.Run([]*tensor.Node{upd, m, v}, feeds)
		if err != nil {
			t.Fatal(err)
		}
		got := runGPU(t, be, []*tensor.Node{upd, m, v}, feeds, false)
		for i := range want {
			if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 1e-6 {
				t.Errorf("adam=%v output %d: relative error %.3g", adam, i, e)
			}
		}
	}
}

// roundEveryProduct makes f32 products that allow half precision round their operands
// whatever their size, until the test ends, so that small test shapes take the path
// that big products take.
func roundEveryProduct(t *testing.T) {
	old := minRoundedWork
	minRoundedWork = 0
	t.Cleanup(func() { minRoundedWork = old })
}

package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// graphOf returns the nodes outs depend on, inputs before their readers (node IDs grow
// in creation order, and a node is created after its inputs).
func graphOf(outs ...*tensor.Node) []*tensor.Node {
	seen := map[*tensor.Node]bool{}
	var all []*tensor.Node
	var visit func(n *tensor.Node)
	visit = func(n *tensor.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		all = append(all, n)
		for _, x := range n.Inputs() {
			visit(x)
		}
	}
	for _, o := range outs {
		visit(o)
	}
	slices.SortFunc(all, func(a, b *tensor.Node) int { return a.ID() - b.ID() })
	return all
}

// fusionCase is a graph whose elementwise parts fuse.
type fusionCase struct {
	name  string
	build func(g *tensor.Graph, in func(shape ...int) *tensor.Node, n int) []*tensor.Node
}

var fusionCases = []fusionCase{
	{"gelu_backward", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gy := in(n, 24), in(n, 24)
		return tensor.GradWithSeed([]*tensor.Node{tensor.Gelu(x, tensor.GeluErf)}, []*tensor.Node{gy}, []*tensor.Node{x})
	}},
	{"gelu_tanh_backward", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gy := in(n), in(n)
		return tensor.GradWithSeed([]*tensor.Node{tensor.Gelu(x, tensor.GeluTanh)}, []*tensor.Node{gy}, []*tensor.Node{x})
	}},
	{"layer_norm_backward", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gamma, beta, gy := in(n, 3, 40), in(40), in(40), in(n, 3, 40)
		y := tensor.LayerNorm(x, gamma, beta, []int{-1}, 1e-5)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma, beta})
	}},
	{"rms_norm_two_axes_backward", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gy := in(n, 5, 7), in(n, 5, 7)
		y := tensor.RMSNorm(x, nil, []int{-2, -1}, 1e-5)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x})
	}},
	{"bias_relu_and_backward", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, b, gy := in(n, 6, 4, 9), in(6, 1, 1), in(n, 6, 4, 9)
		y := tensor.Relu(tensor.Add(x, b))
		return append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, b})...)
	}},
	{"broadcasts", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, row, col, s := in(n, 9), in(9), in(n, 1), in(1)
		a := tensor.Mul(tensor.Sub(x, row), col)
		b := tensor.Where(tensor.Less(a, s), tensor.Exp(a), tensor.Div(row, tensor.AddScalar(tensor.Square(a), 1)))
		return []*tensor.Node{tensor.Add(b, a), tensor.Sum(b, []int{0}, true)}
	}},
	{"dense_bias_gelu", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// Biases gathered (rows of 24) and read in place (runs of 5·40, one repeated per
		// row).
		x, b, x2, b2 := in(n, 3, 24), in(24), in(n, 5, 40), in(5, 40)
		a := tensor.Add(x, b)
		c := tensor.Mul(x2, b2)
		w := tensor.Where(tensor.Less(c, x2), b2, tensor.Sub(b2, c))
		return []*tensor.Node{a, tensor.Gelu(a, tensor.GeluErf), w}
	}},
	{"softmax_rows", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gy := in(n, 10), in(n, 10)
		y := tensor.LogSoftmax(x, 1)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x})
	}},
}

// runFusionCase builds c with rows n and runs it fused or not, with the given buffers
// shared (by the index of a node in the graph's order).
func runFusionCase(t *testing.T, c fusionCase, n int, fused bool, share func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node) (int, [][]float32) {
	t.Helper()
	g := tensor.NewGraph()
	r := rand.New(rand.NewPCG(uint64(n), 9))
	feeds := map[*tensor.Node][]float32{}
	in := func(shape ...int) *tensor.Node {
		x := g.Input(fmt.Sprint("x", len(feeds)), tensor.F32, shape...)
		v := make([]float32, x.Shape().Size())
		for i := range v {
			v[i] = float32(r.NormFloat64() * 2)
		}
		feeds[x] = v
		return x
	}
	outs := c.build(g, in, n)
	nodes := graphOf(outs...)
	defer func(old bool) { fuseOff = old }(fuseOff)
	fuseOff = !fused
	var sh map[*tensor.Node]*tensor.Node
	if share != nil {
		sh = share(nodes)
	}
	return runShared(t, nodes, sh, feeds, outs...)
}

// TestElementwiseFusion checks that fused groups give the unfused results bit for bit
// on ragged sizes, that they form (fewer steps), and, through a second process, the
// same with GML_SIMD=go. At 1100 rows the unfused unary ops split between threads, on
// whole vectors as the fused blocks do, so there too the bits agree.
func TestElementwiseFusion(t *testing.T) {
	for _, c := range fusionCases {
		for _, n := range []int{1, 7, 33, 257, 1100} {
			stepsOff, want := runFusionCase(t, c, n, false, nil)
			steps, got := runFusionCase(t, c, n, true, nil)
			if steps >= stepsOff {
				t.Errorf("%s n=%d: %d steps fused, %d unfused: nothing fused", c.name, n, steps, stepsOff)
			}
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s n=%d (%v): output %d element %d = %v fused, %v unfused", c.name, n, vec.Active(), i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
	if os.Getenv("GML_SIMD") == "" && vec.Active() != vec.Go {
		if out, err := childtest.Run("^TestElementwiseFusion$", "GML_SIMD=go"); err != nil {
			t.Errorf("with GML_SIMD=go: %v\n%s", err, out)
		}
	}
}

// TestElementwiseFusionHazards runs groups whose memory the scheduler could share
// with nodes between their members: the fusion must refuse what would read memory
// after another node overwrote it or write what a node between reads, and give the
// unfused results whatever it does.
func TestElementwiseFusionHazards(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node
		share func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node
		fuses bool // the hazard is only apparent: the group must still fuse
	}{{
		// x is last read by exp; a transpose between the members reuses its buffer.
		"input overwritten between members",
		func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
			x, w := in(n, n), in(n, n)
			a := tensor.Exp(x)
			c := tensor.Transpose(w, 0, 1)
			return []*tensor.Node{tensor.Add(a, c)}
		},
		func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
			return map[*tensor.Node]*tensor.Node{byOp(nodes, tensor.OpPermute): nodes[0]}
		},
		false,
	}, {
		// a is read by a transpose between the members, so it must exist by then.
		"member read between members",
		func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
			x := in(n, n)
			a := tensor.Exp(x)
			c := tensor.Transpose(a, 0, 1)
			return []*tensor.Node{tensor.Add(tensor.MulScalar(a, 2), c)}
		},
		nil,
		false,
	}, {
		// The output takes the buffer of the input the first member read last, as the
		// scheduler's reuse does: fused blocks read it before they overwrite it.
		"output in a read input's memory",
		func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
			x, y := in(n, 5), in(n, 5)
			return []*tensor.Node{tensor.Mul(tensor.Exp(x), y)}
		},
		func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
			return map[*tensor.Node]*tensor.Node{byOp(nodes, tensor.OpMul): nodes[0]}
		},
		true,
	}}
	for _, c := range cases {
		for _, n := range []int{1, 7, 33} {
			fc := fusionCase{c.name, c.build}
			stepsOff, want := runFusionCase(t, fc, n, false, c.share)
			steps, got := runFusionCase(t, fc, n, true, c.share)
			if c.fuses && steps >= stepsOff {
				t.Errorf("%s n=%d: %d steps fused, %d unfused: the group was refused", c.name, n, steps, stepsOff)
			}
			for j := range want[0] {
				if math.Float32bits(got[0][j]) != math.Float32bits(want[0][j]) {
					t.Fatalf("%s n=%d: element %d = %v fused, %v unfused", c.name, n, j, got[0][j], want[0][j])
				}
			}
		}
	}
}

// byOp returns the first node of nodes with op.
func byOp(nodes []*tensor.Node, op tensor.Op) *tensor.Node {
	for _, n := range nodes {
		if n.Op() == op {
			return n
		}
	}
	panic(fmt.Sprintf("no %v node", op))
}

// BenchmarkFusedGeluBackward times GELU's backward on 1M values fused and not.
func BenchmarkFusedGeluBackward(b *testing.B) {
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprint("fused=", fused), func(b *testing.B) {
			g := tensor.NewGraph()
			x, gy := g.Input("x", tensor.F32, 2048, 512), g.Input("gy", tensor.F32, 2048, 512)
			dx := tensor.GradWithSeed([]*tensor.Node{tensor.Gelu(x, tensor.GeluErf)}, []*tensor.Node{gy}, []*tensor.Node{x})
			benchProgram(b, graphOf(dx...), fused, dx...)
		})
	}
}

// BenchmarkFusedLayerNormBackward times a layer norm's backward on 2048 rows of 128:
// ∂x alone, and as in a pre-norm transformer block, with the gradients of gamma and
// beta and the residual's gradient added to ∂x.
func BenchmarkFusedLayerNormBackward(b *testing.B) {
	for _, block := range []bool{false, true} {
		for _, fused := range []bool{false, true} {
			b.Run(fmt.Sprint("block=", block, "/fused=", fused), func(b *testing.B) {
				g := tensor.NewGraph()
				x, gy, gamma := g.Input("x", tensor.F32, 2048, 128), g.Input("gy", tensor.F32, 2048, 128), g.Input("g", tensor.F32, 128)
				if !block {
					y := tensor.LayerNorm(x, gamma, nil, []int{-1}, 1e-5)
					dx := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x})
					benchProgram(b, graphOf(dx...), fused, dx...)
					return
				}
				beta := g.Input("b", tensor.F32, 128)
				y := tensor.Add(tensor.LayerNorm(x, gamma, beta, []int{-1}, 1e-5), x)
				grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma, beta})
				benchProgram(b, graphOf(grads...), fused, grads...)
			})
		}
	}
}

func benchProgram(b *testing.B, nodes []*tensor.Node, fused bool, outs ...*tensor.Node) {
	defer func(old bool) { fuseOff = old }(fuseOff)
	fuseOff = !fused
	be := New()
	seg := &runtime.Segment{Nodes: nodes, Buffers: map[*tensor.Node]runtime.Buffer{}, Escapes: map[*tensor.Node]bool{}}
	for _, o := range outs {
		seg.Escapes[o] = true
	}
	for _, n := range nodes {
		buf, err := be.Alloc(int64(n.DType().Bytes(n.Shape().Size())), runtime.PoolActivations)
		if err != nil {
			b.Fatal(err)
		}
		seg.Buffers[n] = buf
		if n.Op() == tensor.OpInput {
			// Values like a layer's activations, not zeros, whose arithmetic is cheaper.
			r := rand.New(rand.NewPCG(uint64(n.ID()), 3))
			raw := make([]byte, n.DType().Bytes(n.Shape().Size()))
			v := f32s(raw)
			for i := range v {
				v[i] = float32(r.NormFloat64() * 2)
			}
			if err := be.Upload(buf, raw); err != nil {
				b.Fatal(err)
			}
		}
	}
	p, err := be.Prepare(seg)
	if err != nil {
		b.Fatal(err)
	}
	c0 := cpuTime()
	for b.Loop() {
		if err := p.Run(nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's CPU time in nanoseconds: on a loaded machine it measures
// the work where wall time measures the wait.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkFusedBiasRelu times a convolution's bias add and ReLU, both kept.
func BenchmarkFusedBiasRelu(b *testing.B) {
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprint("fused=", fused), func(b *testing.B) {
			g := tensor.NewGraph()
			x, bias := g.Input("x", tensor.F32, 64, 32, 26, 26), g.Input("b", tensor.F32, 32, 1, 1)
			a := tensor.Add(x, bias)
			y := tensor.Relu(a)
			benchProgram(b, graphOf(y), fused, a, y)
		})
	}
}

// BenchmarkFusedBiasGelu times a dense layer's bias add and GELU on 2048 rows of 512,
// both kept (the backward reads the sum).
func BenchmarkFusedBiasGelu(b *testing.B) {
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprint("fused=", fused), func(b *testing.B) {
			g := tensor.NewGraph()
			x, bias := g.Input("x", tensor.F32, 2048, 512), g.Input("b", tensor.F32, 512)
			a := tensor.Add(x, bias)
			y := tensor.Gelu(a, tensor.GeluErf)
			benchProgram(b, graphOf(y), fused, a, y)
		})
	}
}

// TestGeluGradKernel checks that GELU's backward is recognised for vec.GeluGrad, and
// not when an intermediate value is read outside the group (then the generic loops
// run), nor when a constant breaks vec.GeluGrad's preconditions (a NaN or zero C1, a
// C2 that is not negative). TestElementwiseFusion checks the kernel's bits against the
// unfused nodes'.
func TestGeluGradKernel(t *testing.T) {
	// The graph of tensor.Gelu's erf-form gradient, with constants c1 and c2 of choice.
	build := func(c1, c2 float64) []*tensor.Node {
		g := tensor.NewGraph()
		x, gy := g.Input("x", tensor.F32, 33, 24), g.Input("gy", tensor.F32, 33, 24)
		cdf := tensor.ScaleBias(tensor.Erf(tensor.MulScalar(x, c1)), 0.5, 0.5)
		pdf := tensor.MulScalar(tensor.Exp(tensor.MulScalar(tensor.Square(x), c2)), 1/math.Sqrt(2*math.Pi))
		return []*tensor.Node{tensor.Mul(gy, tensor.Add(cdf, tensor.Mul(x, pdf)))}
	}
	g := tensor.NewGraph()
	x, gy := g.Input("x", tensor.F32, 33, 24), g.Input("gy", tensor.F32, 33, 24)
	grad := tensor.GradWithSeed([]*tensor.Node{tensor.Gelu(x, tensor.GeluErf)}, []*tensor.Node{gy}, []*tensor.Node{x})
	for _, c := range []struct {
		name   string
		dx     []*tensor.Node
		escape tensor.Op
		want   bool
	}{
		{"gradient", grad, tensor.OpInvalid, true},
		{"erf read outside", grad, tensor.OpErf, false},
		{"by hand", build(1/math.Sqrt2, -0.5), tensor.OpInvalid, true},
		{"c1 NaN", build(math.NaN(), -0.5), tensor.OpInvalid, false},
		{"c1 zero", build(0, -0.5), tensor.OpInvalid, false},
		{"c2 zero", build(1/math.Sqrt2, 0), tensor.OpInvalid, false},
		{"c2 positive", build(1/math.Sqrt2, 0.5), tensor.OpInvalid, false},
	} {
		dx := c.dx
		nodes := graphOf(dx...)
		mem := make([]nodeMem, len(nodes))
		index := map[*tensor.Node]int{}
		for i, n := range nodes {
			index[n] = i
			mem[i].out = make([]byte, n.DType().Bytes(n.Shape().Size()))
		}
		for i, n := range nodes {
			for _, in := range n.Inputs() {
				mem[i].in = append(mem[i].in, mem[index[in]].out)
			}
		}
		f := &ewFuser{nodes: nodes, mem: mem, index: index, users: make([][]int, len(nodes)),
			escapes: func(n *tensor.Node) bool { return n == dx[0] || n.Op() == c.escape }}
		for i, n := range nodes {
			for _, in := range n.Inputs() {
				f.users[index[in]] = append(f.users[index[in]], i)
			}
		}
		groups := f.groups(map[*tensor.Node]func() error{})
		if len(groups) != 1 || len(groups[0].members) != 10 {
			t.Fatalf("%s: groups %v, want one of ten members", c.name, groups)
		}
		if got := f.geluGradStep(groups[0], map[*tensor.Node]func() error{}) != nil; got != c.want {
			t.Errorf("%s: GELU's backward kernel chosen: %v, want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkBiasGradSum times a dense layer's bias gradient: the column sums of 2048
// rows of 128 and of 512 (a small transformer's) and of 1024 rows of 4096 (mlp4096's).
func BenchmarkBiasGradSum(b *testing.B) {
	for _, sh := range [][2]int{{2048, 128}, {2048, 512}, {1024, 4096}} {
		b.Run(fmt.Sprintf("%dx%d", sh[0], sh[1]), func(b *testing.B) {
			g := tensor.NewGraph()
			x := g.Input("x", tensor.F32, sh[0], sh[1])
			s := tensor.Sum(x, []int{0}, true)
			benchProgram(b, graphOf(s), true, s)
		})
	}
}

// BenchmarkBiasAdd times a lone bias add over 2048 rows of 128 (a projection's, which
// a permute follows, so nothing fuses with it).
func BenchmarkBiasAdd(b *testing.B) {
	g := tensor.NewGraph()
	x, bias := g.Input("x", tensor.F32, 32, 64, 128), g.Input("b", tensor.F32, 128)
	y := tensor.Add(x, bias)
	benchProgram(b, graphOf(y), true, y)
}

package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// castInput feeds values that exercise every conversion: fractions and negatives for
// float-to-integer truncation, integers past 2^24 (and past 2^32 for I64) for rounding
// to float, halfway cases for f16/bf16 rounding, zeros for Bool.
func castInput(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, dt tensor.DType, n int) *tensor.Node {
	x := g.Input(fmt.Sprint("x", len(feeds)), dt, n)
	v := tensor.New(dt, n)
	for i := 0; i < n; i++ {
		var f float64
		switch i % 6 {
		case 0:
			f = 0
		case 1:
			f = float64(r.IntN(2000)-1000) / 7
		case 2:
			f = float64(int64(r.Uint64N(1<<40)) - 1<<39)
		case 3:
			f = float64(r.IntN(1<<26)) - 1<<25
		case 4:
			f = (1 + float64(r.IntN(1<<12))/(1<<12)) * math.Ldexp(1, r.IntN(40)-26)
		default:
			f = r.NormFloat64() * 1e4
		}
		switch dt {
		case tensor.I32:
			f = math.Max(math.Min(f, math.MaxInt32), math.MinInt32)
		case tensor.F16:
			f = math.Max(math.Min(f, 60000), -60000)
		case tensor.Bool:
			f = float64(i % 2)
		}
		v.SetFloat(i, f)
	}
	feeds[x] = v
	return x
}

// intValued feeds a tensor of dtype dt holding integers from [-k/2, k/2), so that equal
// values (ties) are frequent.
func intValued(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, dt tensor.DType, k int, shape ...int) *tensor.Node {
	x := g.Input(fmt.Sprint("x", len(feeds)), dt, shape...)
	v := tensor.New(dt, shape...)
	for i := 0; i < v.Len(); i++ {
		v.SetFloat(i, float64(r.IntN(k)-k/2))
	}
	feeds[x] = v
	return x
}

func TestCastAllPairs(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(51, 52))
	for _, from := range allDTypes {
		for _, to := range allDTypes {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			x := castInput(g, r, feeds, from, 1001)
			if from.IsFloat() && to.IsInt() {
				// Go leaves float-to-int conversion of out-of-range values undefined.
				lim := float64(math.MaxInt32)
				x = tensor.Cast(tensor.Clamp(tensor.Cast(x, tensor.F32), float32(-lim), float32(lim)), from)
			}
			compareWithCPU(t, be, fmt.Sprint("cast_", from, "_", to), 0, []*tensor.Node{tensor.Cast(x, to)}, feeds)
		}
	}
}

func TestCompareLogicalWhere(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(53, 54))
	compares := map[string]func(a, b *tensor.Node) *tensor.Node{
		"equal": tensor.Equal, "not_equal": tensor.NotEqual, "less": tensor.Less,
		"less_equal": tensor.LessEqual, "greater": tensor.Greater, "greater_equal": tensor.GreaterEqual,
	}
	shapes := [][2][]int{{{3, 7}, {3, 7}}, {{5, 1, 3}, {4, 1}}, {{}, {9}}, {{2, 3, 1, 2, 3, 1, 2}, {3, 2, 1, 1, 2}}}
	for name, f := range compares {
		for _, dt := range []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I32, tensor.I64} {
			for _, sh := range shapes {
				g := tensor.NewGraph()
				feeds := map[*tensor.Node]*tensor.Tensor{}
				// Few distinct values, so that equal pairs occur.
				a := intValued(g, r, feeds, dt, 6, sh[0]...)
				b := intValued(g, r, feeds, dt, 6, sh[1]...)
				compareWithCPU(t, be, fmt.Sprint(name, "_", dt, sh), 0, []*tensor.Node{f(a, b)}, feeds)
			}
		}
	}
	logical := map[string]func(a, b *tensor.Node) *tensor.Node{"and": tensor.And, "or": tensor.Or, "xor": tensor.Xor}
	for name, f := range logical {
		for _, sh := range shapes {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			a := typedInput(g, r, feeds, tensor.Bool, 0, 2, sh[0]...)
			b := typedInput(g, r, feeds, tensor.Bool, 0, 2, sh[1]...)
			compareWithCPU(t, be, fmt.Sprint(name, sh), 0, []*tensor.Node{f(a, b), tensor.Not(a)}, feeds)
		}
	}
	for _, dt := range allDTypes {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		scalar := typedInput(g, r, feeds, tensor.Bool, 0, 2)
		c := typedInput(g, r, feeds, tensor.Bool, 0, 2, 4, 1, 5)
		a := typedInput(g, r, feeds, dt, -50, 50, 3, 1)
		b := typedInput(g, r, feeds, dt, -50, 50, 4, 3, 5)
		compareWithCPU(t, be, fmt.Sprint("where_", dt), 0, []*tensor.Node{tensor.Where(c, a, b), tensor.Where(scalar, b, a)}, feeds)
	}
}

func TestScanOps(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(55, 56))
	type build func(x *tensor.Node) *tensor.Node
	index := []struct {
		name  string
		shape []int
		f     build
	}{
		{"argmax_last", []int{7, 33}, func(x *tensor.Node) *tensor.Node { return tensor.ArgMax(x, 1, false) }},
		{"argmax_mid", []int{3, 9, 5}, func(x *tensor.Node) *tensor.Node { return tensor.ArgMax(x, 1, true) }},
		{"argmin_first", []int{11, 4}, func(x *tensor.Node) *tensor.Node { return tensor.ArgMin(x, 0, false) }},
		{"topk_largest", []int{5, 37}, func(x *tensor.Node) *tensor.Node { _, i := tensor.TopK(x, 6, 1, true); return i }},
		{"topk_smallest_mid", []int{2, 13, 3}, func(x *tensor.Node) *tensor.Node { _, i := tensor.TopK(x, 13, 1, false); return i }},
		{"topk_long", []int{3, 5001}, func(x *tensor.Node) *tensor.Node { _, i := tensor.TopK(x, 7, 1, true); return i }},
		{"argmin_long", []int{2, 70001}, func(x *tensor.Node) *tensor.Node { return tensor.ArgMin(x, 1, false) }},
	}
	for _, dt := range []tensor.DType{tensor.F32, tensor.I32, tensor.I64} {
		for _, c := range index {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			// Values from a small range, so ties are frequent and the first-index rules count.
			x := intValued(g, r, feeds, dt, 10, c.shape...)
			compareWithCPU(t, be, fmt.Sprint(c.name, "_", dt), 0, []*tensor.Node{c.f(x)}, feeds)
		}
	}
	g := tensor.NewGraph()
	feeds := map[*tensor.Node]*tensor.Tensor{}
	// More lines than one grid row of workgroups holds (65535).
	many := intValued(g, r, feeds, tensor.F32, 4, 65600, 2)
	compareWithCPU(t, be, "argmax_many_lines", 0, []*tensor.Node{tensor.ArgMax(many, 1, false)}, feeds)

	g = tensor.NewGraph()
	feeds = map[*tensor.Node]*tensor.Tensor{}
	x := typedInput(g, r, feeds, tensor.F32, -1, 1, 4, 9)
	nan := tensor.Where(tensor.Greater(x, g.Scalar(tensor.F32, 0.8)), g.Scalar(tensor.F32, math.NaN()), x)
	_, top := tensor.TopK(nan, 4, 1, true)
	compareWithCPU(t, be, "nan_first", 0, []*tensor.Node{tensor.ArgMax(nan, 1, false), tensor.ArgMin(nan, 1, false), top}, feeds)

	sums := []struct {
		name  string
		shape []int
		f     build
	}{
		{"cumsum", []int{5, 3001}, func(x *tensor.Node) *tensor.Node { return tensor.CumSum(x, 1, false, false) }},
		{"cumsum_exclusive_reverse", []int{7, 9, 3}, func(x *tensor.Node) *tensor.Node { return tensor.CumSum(x, 1, true, true) }},
		{"cumsum_exclusive_long", []int{2, 777}, func(x *tensor.Node) *tensor.Node { return tensor.CumSum(x, 1, true, false) }},
		{"cumsum_axis0", []int{1000, 3}, func(x *tensor.Node) *tensor.Node { return tensor.CumSum(x, 0, false, true) }},
		{"var_rows", []int{6, 257}, func(x *tensor.Node) *tensor.Node { return tensor.Variance(x, []int{1}, false, 1) }},
		{"var_mid", []int{3, 4, 5, 6}, func(x *tensor.Node) *tensor.Node { return tensor.Variance(x, []int{1, 2}, true, 0) }},
		{"var_all", []int{33, 31}, func(x *tensor.Node) *tensor.Node { return tensor.Variance(x, nil, false, 0) }},
		{"var_long", []int{301, 997}, func(x *tensor.Node) *tensor.Node { return tensor.Variance(x, nil, false, 1) }},
	}
	for _, c := range sums {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := typedInput(g, r, feeds, tensor.F32, 1, 3, c.shape...)
		compareWithCPU(t, be, c.name, 1e-6, []*tensor.Node{c.f(x)}, feeds)
	}
}

// TestDropoutMatchesCPU checks that the shader draws tensor.DropoutKeep's mask bit for bit.
func TestDropoutMatchesCPU(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(57, 58))
	for _, st := range []tensor.DType{tensor.I32, tensor.I64} {
		for _, seed := range []float64{0, 7, 2147483647, -123456} {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			x := typedInput(g, r, feeds, tensor.F32, -2, 2, 37, 27)
			s := g.Scalar(st, seed)
			like := typedInput(g, r, feeds, tensor.I64, 0, 9, 1001)
			compareWithCPU(t, be, fmt.Sprint("dropout_", st, "_", seed), 0,
				[]*tensor.Node{tensor.Dropout(x, s, 0.3), tensor.DropoutMask(like, s, 0.55)}, feeds)
		}
	}
}

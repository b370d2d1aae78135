package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// refSoftmax is softmax or log-softmax of x*scale + mask along axis in float64.
func refSoftmax(x []float64, shape tensor.Shape, axis int, scale float64, mask []float64, mshape tensor.Shape, log bool) []float64 {
	outer, dim, inner := shape[:axis].Size(), shape[axis], shape[axis+1:].Size()
	z := make([]float64, len(x))
	for i, v := range x {
		z[i] = v * scale
		if mask != nil {
			z[i] += mask[bcast(i, mshape, shape)]
		}
	}
	y := make([]float64, len(x))
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			at := func(a int) int { return (o*dim+a)*inner + in }
			m := math.Inf(-1)
			for a := 0; a < dim; a++ {
				m = math.Max(m, z[at(a)])
			}
			var s float64
			for a := 0; a < dim; a++ {
				s += math.Exp(z[at(a)] - m)
			}
			for a := 0; a < dim; a++ {
				if log {
					y[at(a)] = z[at(a)] - m - math.Log(s)
				} else {
					y[at(a)] = math.Exp(z[at(a)]-m) / s
				}
			}
		}
	}
	return y
}

// maskedInput adds an F32 additive mask of the given shape holding random values in
// [0, 1), and -Inf at a quarter of the positions whose index along axis is not 0, so
// rows along axis always keep a visible entry. axis may be negative (not in the mask).
func maskedInput(e *env, shape tensor.Shape, axis int) (*tensor.Node, []float64) {
	v := make([]float64, shape.Size())
	st := shape.Strides()
	for i := range v {
		v[i] = e.rng.Float64()
		if axis >= 0 && (i/st[axis])%shape[axis] != 0 && e.rng.IntN(4) == 0 {
			v[i] = math.Inf(-1)
		}
	}
	return e.feed(tensor.F32, v, shape...), v
}

// checkDecompose evaluates n's decomposition beside n and compares the two.
func checkDecompose(t *testing.T, name string, e *env, n *tensor.Node, tol float64) {
	t.Helper()
	got := e.run(n, tensor.Decompose(n))
	check(t, name+" vs decomposition", got[0], n.Shape(), got[1].Float64s(), tol)
}

func TestSoftmaxKernels(t *testing.T) {
	for _, c := range []struct {
		shape, mask tensor.Shape // mask nil: none
		axis        int
		scale       float32
	}{
		{tensor.Shape{3, 5, 7}, nil, -1, 0},
		{tensor.Shape{3, 5, 7}, nil, 1, 2.5},
		{tensor.Shape{4, 3}, nil, 0, 0},
		{tensor.Shape{2, 4, 6}, tensor.Shape{4, 6}, 2, 0.5},
		{tensor.Shape{2, 5, 3}, tensor.Shape{2, 1, 3}, 1, 0},
		{tensor.Shape{1}, nil, 0, 0},
		// Ragged rows, short (gathered in blocks, split between threads) and long.
		{tensor.Shape{33, 1}, nil, 1, 0},
		{tensor.Shape{4001, 10}, nil, 1, 0},
		{tensor.Shape{257, 7}, tensor.Shape{257, 7}, 1, 1.5},
		{tensor.Shape{7, 33}, tensor.Shape{1, 33}, 1, 0},
		{tensor.Shape{7, 64}, nil, 1, 0},
		{tensor.Shape{3, 257}, nil, 1, 0},
		{tensor.Shape{33, 257}, nil, 0, 0},
	} {
		for _, log := range []bool{false, true} {
			e := newEnv(t)
			x, X := e.f32(c.shape...)
			var mask *tensor.Node
			var mv []float64
			if c.mask != nil {
				mask, mv = maskedInput(e, c.mask, c.axis-(len(c.shape)-len(c.mask)))
			}
			op := tensor.OpSoftmax
			if log {
				op = tensor.OpLogSoftmax
			}
			inputs := []*tensor.Node{x}
			if mask != nil {
				inputs = append(inputs, mask)
			}
			y := tensor.Apply(op, tensor.SoftmaxAttr{Axis: c.axis, Scale: c.scale}, inputs...)
			at := y.Attr().(tensor.SoftmaxAttr)
			want := refSoftmax(X, c.shape, at.Axis, float64(at.Scale), mv, c.mask, log)
			name := fmt.Sprintf("%v %v axis %d mask %v", op, c.shape, c.axis, c.mask)
			check(t, name, e.run(y)[0], c.shape, want, 1e-6)
			checkDecompose(t, name, e, y, 1e-5)
		}
	}
}

// refNorm is layer (or RMS) normalisation of rows of inner elements in float64.
func refNorm(x []float64, inner int, gamma, beta []float64, eps float64, rms bool) []float64 {
	y := make([]float64, len(x))
	for r := 0; r < len(x)/inner; r++ {
		row := x[r*inner : (r+1)*inner]
		var mean, ss float64
		if !rms {
			for _, v := range row {
				mean += v
			}
			mean /= float64(inner)
		}
		for _, v := range row {
			ss += (v - mean) * (v - mean)
		}
		inv := 1 / math.Sqrt(ss/float64(inner)+eps)
		for j, v := range row {
			o := (v - mean) * inv
			if gamma != nil {
				o *= gamma[j]
			}
			if beta != nil {
				o += beta[j]
			}
			y[r*inner+j] = o
		}
	}
	return y
}

func TestNormKernels(t *testing.T) {
	for _, c := range []struct {
		shape       tensor.Shape
		axes        []int
		gamma, beta bool
		offset      float64 // added to x: normalisation must not lose precision to a large mean
		rms         bool
	}{
		{tensor.Shape{4, 6}, nil, true, true, 0, false},
		{tensor.Shape{2, 3, 5}, []int{-2, -1}, true, false, 1000, false},
		{tensor.Shape{3, 7}, nil, false, true, 0, false},
		{tensor.Shape{5}, nil, false, false, 0, false},
		{tensor.Shape{3, 8}, nil, true, false, 0, true},
		{tensor.Shape{2, 2, 3}, []int{2}, false, false, 0, true},
	} {
		e := newEnv(t)
		x, X := e.input(tensor.F32, c.offset-2, c.offset+2, c.shape...)
		inner := c.shape[len(c.shape)-max(1, len(c.axes)):]
		var gamma, beta *tensor.Node
		var gv, bv []float64
		if c.gamma {
			gamma, gv = e.f32(inner...)
		}
		if c.beta {
			beta, bv = e.f32(inner...)
		}
		var y *tensor.Node
		if c.rms {
			y = tensor.RMSNorm(x, gamma, c.axes, 1e-6)
		} else {
			y = tensor.LayerNorm(x, gamma, beta, c.axes, 1e-5)
		}
		if beta != nil && gamma == nil {
			gv = y.Input(1).Value().Float64s() // the builder's constant ones
		}
		eps := float64(y.Attr().(tensor.NormAttr).Eps)
		want := refNorm(X, inner.Size(), gv, bv, eps, c.rms)
		name := fmt.Sprintf("%v %v axes %v", y.Op(), c.shape, c.axes)
		check(t, name, e.run(y)[0], c.shape, want, 1e-5)
		// The composition subtracts the mean in float32, which loses the digits a large
		// offset takes; compare it only on centred data.
		if c.offset == 0 {
			checkDecompose(t, name, e, y, 1e-5)
		}
	}
}

// refAttentionProbs is row i of softmax(q kᵀ scale + mask + causal) for leading index b,
// in float64.
func refAttentionProbs(q, k []float64, b, i, tq, tk, d int, scale float64, causal bool, mask func(b, i, j int) float64) []float64 {
	s := make([]float64, tk)
	for j := range s {
		for e := 0; e < d; e++ {
			s[j] += q[(b*tq+i)*d+e] * k[(b*tk+j)*d+e]
		}
		s[j] = s[j]*scale + mask(b, i, j)
		if causal && j > i {
			s[j] = math.Inf(-1)
		}
	}
	return refSoftmax(s, tensor.Shape{tk}, 0, 1, nil, nil, false)
}

// attentionMask makes a random additive mask of shape mask (nil: none) for attention of
// q over k, hiding some keys, and returns it with its value at (leading index b, query
// i, key j) as the references need it.
func attentionMask(e *env, q, k, mask tensor.Shape) (*tensor.Node, func(b, i, j int) float64) {
	if mask == nil {
		return nil, func(b, i, j int) float64 { return 0 }
	}
	r := len(q)
	tq, tk := q[r-2], k[r-2]
	node, m := maskedInput(e, mask, len(mask)-1)
	full := append(q[:r-2].Clone(), tq, tk)
	return node, func(b, i, j int) float64 { return m[bcast((b*tq+i)*tk+j, mask, full)] }
}

// refAttention is softmax(q kᵀ scale + mask + causal) v per leading index, in float64.
func refAttention(q, k, v []float64, batch, tq, tk, d, dv int, scale float64, causal bool, mask func(b, i, j int) float64) []float64 {
	out := make([]float64, batch*tq*dv)
	for b := 0; b < batch; b++ {
		for i := 0; i < tq; i++ {
			p := refAttentionProbs(q, k, b, i, tq, tk, d, scale, causal, mask)
			for j, pj := range p {
				for e := 0; e < dv; e++ {
					out[(b*tq+i)*dv+e] += pj * v[(b*tk+j)*dv+e]
				}
			}
		}
	}
	return out
}

func TestAttentionKernel(t *testing.T) {
	for _, c := range []struct {
		q, k, v, mask tensor.Shape
		at            tensor.AttentionAttr
	}{
		{tensor.Shape{2, 3, 5, 8}, tensor.Shape{2, 3, 5, 8}, tensor.Shape{2, 3, 5, 8}, nil, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{1, 2, 4, 6}, tensor.Shape{1, 2, 7, 6}, tensor.Shape{1, 2, 7, 5}, tensor.Shape{4, 7}, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{1, 1, 6, 4}, tensor.Shape{1, 1, 3, 4}, tensor.Shape{1, 1, 3, 2}, nil, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{2, 5, 4}, tensor.Shape{2, 3, 4}, tensor.Shape{2, 3, 3}, tensor.Shape{2, 1, 3}, tensor.AttentionAttr{Scale: 0.3}},
		{tensor.Shape{3, 1, 9}, tensor.Shape{3, 6, 9}, tensor.Shape{3, 6, 2}, nil, tensor.AttentionAttr{}},
		// Several tiles of queries and keys (the tile is 128): the running softmax
		// rescales earlier tiles, and causal query blocks skip the tiles they cannot see.
		{tensor.Shape{1, 2, 150, 7}, tensor.Shape{1, 2, 260, 7}, tensor.Shape{1, 2, 260, 5}, tensor.Shape{150, 260}, tensor.AttentionAttr{Causal: true}},
		{tensor.Shape{2, 140, 3}, tensor.Shape{2, 300, 3}, tensor.Shape{2, 300, 4}, nil, tensor.AttentionAttr{Scale: 2}},
	} {
		e := newEnv(t)
		q, Q := e.f32(c.q...)
		k, K := e.f32(c.k...)
		v, V := e.f32(c.v...)
		r := len(c.q)
		tq, d, tk, dv := c.q[r-2], c.q[r-1], c.k[r-2], c.v[r-1]
		batch := c.q[:r-2].Size()
		mask, maskAt := attentionMask(e, c.q, c.k, c.mask)
		y := tensor.Attention(q, k, v, mask, c.at)
		scale := float64(y.Attr().(tensor.AttentionAttr).Scale)
		want := refAttention(Q, K, V, batch, tq, tk, d, dv,
			scale, c.at.Causal, maskAt)
		name := fmt.Sprintf("attention q%v k%v mask %v", c.q, c.k, c.mask)
		check(t, name, e.run(y)[0], y.Shape(), want, 1e-5)
		checkDecompose(t, name, e, y, 1e-5)
	}
}

func TestRoPEKernel(t *testing.T) {
	for _, c := range []struct {
		x   tensor.Shape
		pos []float64
		dt  tensor.DType
		at  tensor.RoPEAttr
	}{
		{tensor.Shape{2, 3, 5, 8}, []float64{0, 1, 2, 7, 30}, tensor.I32, tensor.RoPEAttr{}},
		{tensor.Shape{4, 6}, []float64{5, 4, 3, -2}, tensor.I64, tensor.RoPEAttr{Dims: 4, Base: 500}},
	} {
		e := newEnv(t)
		x, X := e.f32(c.x...)
		pos := e.feed(c.dt, c.pos, len(c.pos))
		y := tensor.RoPE(x, pos, c.at)
		at := y.Attr().(tensor.RoPEAttr)
		want := append([]float64(nil), X...)
		r := len(c.x)
		tn, d := c.x[r-2], c.x[r-1]
		for row := 0; row < len(X)/d; row++ {
			p := c.pos[row%tn]
			for i := 0; i < at.Dims/2; i++ {
				theta := p * math.Pow(float64(at.Base), -2*float64(i)/float64(at.Dims))
				x0, x1 := X[row*d+2*i], X[row*d+2*i+1]
				want[row*d+2*i] = x0*math.Cos(theta) - x1*math.Sin(theta)
				want[row*d+2*i+1] = x0*math.Sin(theta) + x1*math.Cos(theta)
			}
		}
		name := fmt.Sprintf("rope %v %+v", c.x, c.at)
		check(t, name, e.run(y)[0], c.x, want, 1e-5)
		checkDecompose(t, name, e, y, 1e-5)
	}
}

// TestHalfWideningConvNorm checks that F16 and BF16 nodes of the E4 ops run (by widening to F32)
// and agree with the F32 computation to half precision.
func TestHalfWideningConvNorm(t *testing.T) {
	run := func(dt tensor.DType) []*tensor.Tensor {
		e := newEnv(t) // the same seed each time: the same values, rounded to dt
		x, _ := e.input(dt, -1, 1, 2, 3, 6, 6)
		w, _ := e.input(dt, -1, 1, 4, 3, 3, 3)
		q, _ := e.input(dt, -1, 1, 2, 2, 5, 8)
		pos := e.feed(tensor.I64, []float64{0, 1, 2, 3, 4}, 5)
		return e.run(
			tensor.Conv2D(x, w, tensor.ConvOptions{Padding: tensor.ConvPadding{Mode: tensor.PaddingSame}}),
			tensor.MaxPool2D(x, 2, 2),
			tensor.SoftmaxMasked(q, nil, -1, 0.5),
			tensor.LayerNorm(q, nil, nil, nil, 1e-3),
			tensor.Attention(q, q, q, nil, tensor.AttentionAttr{Causal: true}),
			tensor.RoPE(q, pos, tensor.RoPEAttr{}),
		)
	}
	want := run(tensor.F32)
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		for i, got := range run(dt) {
			check(t, fmt.Sprintf("%v output %d", dt, i), got, want[i].Shape(), want[i].Float64s(), 0.05)
		}
	}
	// The decompositions of half nodes stay within half precision of the fused kernels.
	e := newEnv(t)
	x, _ := e.input(tensor.F16, -1, 1, 2, 3, 8)
	pos := e.feed(tensor.I32, []float64{0, 9, 40}, 3)
	for _, n := range []*tensor.Node{tensor.RoPE(x, pos, tensor.RoPEAttr{}), tensor.Softmax(x, 1),
		tensor.LayerNorm(x, nil, nil, nil, 1e-3), tensor.Attention(x, x, x, nil, tensor.AttentionAttr{Causal: true})} {
		checkDecompose(t, fmt.Sprint("f16 ", n.Op()), e, n, 0.02)
	}
}

// TestNormComposites checks BatchNormTrain, BatchNormInfer and GroupNorm on the CPU
// against per-channel and per-group float64 statistics.
func TestNormComposites(t *testing.T) {
	e := newEnv(t)
	n, c, hw := 3, 4, 5
	x, X := e.f32(n, c, hw)
	gamma, G := e.f32(c)
	beta, B := e.f32(c)
	mean, variance, y := tensor.BatchNormTrain(x, gamma, beta, []int{0, 2}, 1e-3)
	inf := tensor.BatchNormInfer(x, gamma, beta, mean, variance, 1e-3)
	gn := tensor.GroupNorm(x, 2, gamma, beta, 1e-5)
	got := e.run(mean, variance, y, inf, gn)

	at := func(i, ch, p int) int { return (i*c+ch)*hw + p }
	wantMean, wantVar := make([]float64, c), make([]float64, c)
	wantY, wantGN := make([]float64, len(X)), make([]float64, len(X))
	for ch := 0; ch < c; ch++ {
		var vals []float64
		for i := 0; i < n; i++ {
			for p := 0; p < hw; p++ {
				vals = append(vals, X[at(i, ch, p)])
			}
		}
		norm := refNorm(vals, len(vals), nil, nil, 1e-3, false)
		for _, v := range vals {
			wantMean[ch] += v / float64(len(vals))
		}
		for _, v := range vals {
			wantVar[ch] += (v - wantMean[ch]) * (v - wantMean[ch]) / float64(len(vals))
		}
		k := 0
		for i := 0; i < n; i++ {
			for p := 0; p < hw; p++ {
				wantY[at(i, ch, p)] = norm[k]*G[ch] + B[ch]
				k++
			}
		}
	}
	for i := 0; i < n; i++ {
		for grp := 0; grp < 2; grp++ {
			lo, hi := at(i, grp*c/2, 0), at(i, (grp+1)*c/2, 0)
			norm := refNorm(X[lo:hi], hi-lo, nil, nil, 1e-5, false)
			for k := range norm {
				ch := grp*c/2 + k/hw
				wantGN[lo+k] = norm[k]*G[ch] + B[ch]
			}
		}
	}
	check(t, "batch norm mean", got[0], tensor.Shape{c}, wantMean, 1e-5)
	check(t, "batch norm variance", got[1], tensor.Shape{c}, wantVar, 1e-5)
	check(t, "batch norm train", got[2], x.Shape(), wantY, 1e-5)
	check(t, "batch norm infer", got[3], x.Shape(), wantY, 1e-5)
	check(t, "group norm", got[4], x.Shape(), wantGN, 1e-5)
}

// TestNormEmpty runs the row-wise ops on tensors with no rows or empty rows; nothing may
// fail.
func TestNormEmpty(t *testing.T) {
	e := newEnv(t)
	x, _ := e.f32(0, 4)
	x2, _ := e.f32(4, 0)
	q, _ := e.f32(0, 2, 3, 4)
	pos := e.feed(tensor.I32, []float64{0, 1, 2}, 3)
	outs := []*tensor.Node{tensor.Softmax(x, -1), tensor.LogSoftmax(x, 0), tensor.LayerNorm(x, nil, nil, nil, 1e-5),
		tensor.RMSNorm(x, nil, nil, 1e-5), tensor.Softmax(x2, -1), tensor.LayerNorm(x2, nil, nil, nil, 1e-5), tensor.Attention(q, q, q, nil, tensor.AttentionAttr{Causal: true}),
		tensor.RoPE(q, pos, tensor.RoPEAttr{})}
	for i, got := range e.run(outs...) {
		check(t, fmt.Sprint(outs[i].Op(), " empty"), got, outs[i].Shape(), nil, 0)
	}
}

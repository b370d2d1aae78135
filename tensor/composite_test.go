package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// compositeEnv feeds random inputs to one graph and runs it on the CPU backend.
type compositeEnv struct {
	g     *tensor.Graph
	feeds map[*tensor.Node]*tensor.Tensor
	rng   *rand.Rand
}

func (e *compositeEnv) input(dt tensor.DType, lo, hi float64, shape ...int) (*tensor.Node, []float64) {
	t := tensor.New(dt, shape...)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat(i, lo+(hi-lo)*e.rng.Float64())
	}
	n := e.g.Input("x", dt, shape...)
	e.feeds[n] = t
	return n, t.Float64s()
}

func near(t *testing.T, name string, got *tensor.Tensor, want []float64, tol float64) {
	t.Helper()
	if got.Len() != len(want) {
		t.Fatalf("%s: %d values, want %d", name, got.Len(), len(want))
	}
	for i, w := range want {
		if g := got.Float(i); !(math.Abs(g-w) <= tol*(1+math.Abs(w))) {
			t.Errorf("%s: element %d = %v, want %v", name, i, g, w)
			return
		}
	}
}

func TestLossComposites(t *testing.T) {
	const b, c = 6, 4
	e := &compositeEnv{tensor.NewGraph(), map[*tensor.Node]*tensor.Tensor{}, rand.New(rand.NewPCG(3, 4))}
	logits, lv := e.input(tensor.F32, -3, 3, b, c)
	labels, yv := e.input(tensor.I64, 0, c, b)
	onehot := tensor.OneHot(labels, c, tensor.F32)
	probs, pv := e.input(tensor.F32, 0, 1, b, c)
	target, tv := e.input(tensor.F32, 0, 1, b, c)
	outs := []*tensor.Node{
		tensor.SparseSoftmaxCrossEntropyPerSample(logits, labels), tensor.SoftmaxCrossEntropy(logits, onehot, -1),
		tensor.CrossEntropyPerSample(probs, onehot), tensor.BinaryCrossEntropyPerSample(probs, target),
		tensor.BinaryCrossEntropyWithLogitsPerSample(logits, target), tensor.MSE(probs, target),
		tensor.MAEPerSample(probs, target), tensor.HuberPerSample(logits, target, 1),
	}
	res, err := cputest.Run(outs, e.feeds)
	if err != nil {
		t.Fatal(err)
	}
	sparse, bce, bcel, mae, huber := make([]float64, b), make([]float64, b), make([]float64, b), make([]float64, b), make([]float64, b)
	ce := make([]float64, b)
	var mean, mse float64
	for i := 0; i < b; i++ {
		row := lv[i*c : (i+1)*c]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		lse := 0.0
		for _, v := range row {
			lse += math.Exp(v - mx)
		}
		lse = mx + math.Log(lse)
		y := int(yv[i])
		sparse[i] = lse - row[y]
		mean += sparse[i] / b
		ce[i] = -math.Log(pv[i*c+y])
		for j := 0; j < c; j++ {
			p, q, x := pv[i*c+j], tv[i*c+j], lv[i*c+j]
			bce[i] -= (q*math.Log(p) + (1-q)*math.Log(1-p)) / c
			s := 1 / (1 + math.Exp(-x))
			bcel[i] -= (q*math.Log(s) + (1-q)*math.Log(1-s)) / c
			mse += (p - q) * (p - q) / (b * c)
			mae[i] += math.Abs(p-q) / c
			if d := math.Abs(x - q); d <= 1 {
				huber[i] += 0.5 * d * d / c
			} else {
				huber[i] += (d - 0.5) / c
			}
		}
	}
	near(t, "sparse softmax xent", res[0], sparse, 1e-5)
	near(t, "softmax xent", res[1], []float64{mean}, 1e-5)
	near(t, "cross entropy", res[2], ce, 1e-5)
	near(t, "bce", res[3], bce, 1e-4)
	near(t, "bce with logits", res[4], bcel, 1e-5)
	near(t, "mse", res[5], []float64{mse}, 1e-5)
	near(t, "mae", res[6], mae, 1e-5)
	near(t, "huber", res[7], huber, 1e-5)
}

func TestRecurrentCells(t *testing.T) {
	const b, in, h = 2, 3, 4
	e := &compositeEnv{tensor.NewGraph(), map[*tensor.Node]*tensor.Tensor{}, rand.New(rand.NewPCG(5, 6))}
	x, xv := e.input(tensor.F32, -1, 1, b, in)
	h0, hv := e.input(tensor.F32, -1, 1, b, h)
	c0, cv := e.input(tensor.F32, -1, 1, b, h)
	wx4, wx4v := e.input(tensor.F32, -1, 1, in, 4*h)
	wh4, wh4v := e.input(tensor.F32, -1, 1, h, 4*h)
	b4, b4v := e.input(tensor.F32, -1, 1, 4*h)
	wx3, wx3v := e.input(tensor.F32, -1, 1, in, 3*h)
	wh3, wh3v := e.input(tensor.F32, -1, 1, h, 3*h)
	bx, bxv := e.input(tensor.F32, -1, 1, 3*h)
	bh, bhv := e.input(tensor.F32, -1, 1, 3*h)
	h2, c2 := tensor.LSTMCell(x, h0, c0, wx4, wh4, b4)
	g2 := tensor.GRUCell(x, h0, wx3, wh3, bx, bh)
	res, err := cputest.Run([]*tensor.Node{h2, c2, g2}, e.feeds)
	if err != nil {
		t.Fatal(err)
	}
	// affine returns row r of a@w + bias for a [rows, k] and w [k, n].
	affine := func(a []float64, k int, r int, w []float64, n int, bias []float64) []float64 {
		out := make([]float64, n)
		for j := range out {
			out[j] = bias[j]
			for p := 0; p < k; p++ {
				out[j] += a[r*k+p] * w[p*n+j]
			}
		}
		return out
	}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	wantH, wantC, wantG := make([]float64, b*h), make([]float64, b*h), make([]float64, b*h)
	zero := make([]float64, 4*h)
	for r := 0; r < b; r++ {
		gx := affine(xv, in, r, wx4v, 4*h, b4v)
		gh := affine(hv, h, r, wh4v, 4*h, zero)
		for j := 0; j < h; j++ {
			i, f, g, o := sig(gx[j]+gh[j]), sig(gx[h+j]+gh[h+j]), math.Tanh(gx[2*h+j]+gh[2*h+j]), sig(gx[3*h+j]+gh[3*h+j])
			wantC[r*h+j] = f*cv[r*h+j] + i*g
			wantH[r*h+j] = o * math.Tanh(wantC[r*h+j])
		}
		ax := affine(xv, in, r, wx3v, 3*h, bxv)
		ah := affine(hv, h, r, wh3v, 3*h, bhv)
		for j := 0; j < h; j++ {
			rr, z := sig(ax[j]+ah[j]), sig(ax[h+j]+ah[h+j])
			n := math.Tanh(ax[2*h+j] + rr*ah[2*h+j])
			wantG[r*h+j] = (1-z)*n + z*hv[r*h+j]
		}
	}
	near(t, "lstm h", res[0], wantH, 1e-5)
	near(t, "lstm c", res[1], wantC, 1e-5)
	near(t, "gru h", res[2], wantG, 1e-5)
}

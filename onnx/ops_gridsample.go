package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// AffineGrid and GridSample. AffineGrid maps the normalised coordinates of every output
// point through an affine matrix per batch entry (a product with the constant grid of
// coordinates). GridSample: every output point reads the input at the point the grid gives, in
// normalised coordinates, by nearest, linear or cubic interpolation over any number of
// spatial axes. The taps (1, 2^r or 4^r of them) are gathers of the flattened input at
// computed indices, weighted and summed; padding_mode decides coordinates and taps
// outside the input as the ONNX reference does.

func init() {
	register(16, lowerGridSample, "GridSample")
	register(20, lowerAffineGrid, "AffineGrid")
}

// gridAxis is one spatial axis's sampling coordinate and its bounds.
type gridAxis struct {
	size       int
	v          *tensor.Node // the coordinate in pixels, (N, out...)
	xmin, xmax float64      // the border: [0, size-1] with align_corners, else [-0.5, size-0.5]
}

func lowerGridSample(c *ctx) {
	c.requireFloat(0)
	c.requireFloat(1)
	x, grid := c.x(0), c.x(1)
	xs, gs := x.Shape(), grid.Shape()
	r := len(xs) - 2
	if r < 1 || len(gs) != r+2 || gs[0] != xs[0] || gs[r+1] != r {
		c.failf("input %v and grid %v: want (N, C, D1...Dr) and (N, H1...Hr, %d)", xs, gs, r)
	}
	mode := c.attrString("mode", map[bool]string{true: "bilinear", false: "linear"}[c.opset() < 20])
	switch mode {
	case "bilinear":
		mode = "linear"
	case "bicubic":
		mode = "cubic"
	case "linear", "nearest", "cubic":
	default:
		c.failf("mode %q: want linear (bilinear), nearest or cubic (bicubic)", mode)
	}
	pad := c.attrString("padding_mode", "zeros")
	if pad != "zeros" && pad != "border" && pad != "reflection" {
		c.failf("padding_mode %q: want zeros, border or reflection", pad)
	}
	align := c.attrInt("align_corners", 0) != 0
	dt := grid.DType()
	s := func(v float64) *tensor.Node { return c.scalar(dt, v) }
	outShape := gs[:r+1]
	q := outShape[1:].Size()
	coords := tensor.Split(grid, r+1, onesOf(r)...)
	axes := make([]gridAxis, r)
	for i := range axes {
		// The grid's last axis lists x (the last spatial axis) first.
		size := xs[2+i]
		g := tensor.Reshape(coords[r-1-i], outShape...)
		var v *tensor.Node
		a := gridAxis{size: size, xmin: -0.5, xmax: float64(size) - 0.5}
		if align {
			v = tensor.Mul(tensor.Add(g, s(1)), s(float64(size-1)/2))
			a.xmin, a.xmax = 0, float64(size-1)
		} else {
			v = tensor.Div(tensor.Sub(tensor.Mul(tensor.Add(g, s(1)), s(float64(size))), s(1)), s(2))
		}
		if mode == "nearest" {
			v = tensor.Round(v)
		}
		out := tensor.Or(tensor.Less(v, s(a.xmin)), tensor.Greater(v, s(a.xmax)))
		switch pad {
		case "border":
			v = tensor.Where(out, tensor.Minimum(tensor.Maximum(v, s(0)), s(float64(size-1))), v)
		case "reflection":
			v = gridReflect(c, v, a.xmin, a.xmax)
		}
		a.v = v
		axes[i] = a
	}
	// The taps of each axis: integer positions and their weights.
	type tap struct{ idx, w *tensor.Node }
	taps := make([][]tap, r)
	for i, a := range axes {
		switch mode {
		case "nearest":
			taps[i] = []tap{{a.v, nil}}
		case "linear":
			f := tensor.Floor(a.v)
			t := tensor.Sub(a.v, f)
			taps[i] = []tap{{f, tensor.Sub(s(1), t)}, {tensor.Add(f, s(1)), t}}
		case "cubic":
			f := tensor.Floor(a.v)
			t := tensor.Sub(a.v, f)
			for k := -1; k <= 2; k++ {
				// Keys' kernel (a = -0.75) at distance |t - k|.
				d := tensor.Abs(tensor.Sub(t, s(float64(k))))
				taps[i] = append(taps[i], tap{tensor.Add(f, s(float64(k))), cubicKernel(c, d, dt)})
			}
		}
	}
	n, ch := xs[0], xs[1]
	flat := tensor.Reshape(x, n, ch, xs[2:].Size())
	var sum *tensor.Node
	pick := make([]int, r)
	for {
		var lin, w, valid *tensor.Node
		stride := 1
		for i := r - 1; i >= 0; i-- {
			t := taps[i][pick[i]]
			idx := gridTapIndex(c, t.idx, axes[i], pad)
			if pad == "zeros" {
				in := tensor.And(tensor.GreaterEqual(t.idx, s(0)), tensor.LessEqual(t.idx, s(float64(axes[i].size-1))))
				if valid == nil {
					valid = in
				} else {
					valid = tensor.And(valid, in)
				}
			}
			term := tensor.Mul(tensor.Cast(idx, tensor.I64), c.scalar(tensor.I64, float64(stride)))
			if lin == nil {
				lin = term
			} else {
				lin = tensor.Add(lin, term)
			}
			if t.w != nil {
				if w == nil {
					w = t.w
				} else {
					w = tensor.Mul(w, t.w)
				}
			}
			stride *= axes[i].size
		}
		if valid != nil {
			if w == nil {
				w = s(1)
			}
			w = tensor.Where(valid, w, s(0))
		}
		idx := tensor.Expand(tensor.Reshape(lin, n, 1, q), n, ch, q)
		y := tensor.TakeAlong(flat, idx, 2)
		if w != nil {
			y = tensor.Mul(y, tensor.Cast(tensor.Reshape(w, n, 1, q), x.DType()))
		}
		if sum == nil {
			sum = y
		} else {
			sum = tensor.Add(sum, y)
		}
		// Next combination of taps.
		k := r - 1
		for ; k >= 0; k-- {
			if pick[k]++; pick[k] < len(taps[k]) {
				break
			}
			pick[k] = 0
		}
		if k < 0 {
			break
		}
	}
	c.set(0, tensor.Reshape(sum, append(tensor.Shape{n, ch}, gs[1:r+1]...)...), c.dtype(0))
}

// gridTapIndex maps a tap's integer position to an index inside the axis: clamped
// (zeros, whose outside taps are weighted 0, and border), or reflected at the border
// and truncated as the reference does.
func gridTapIndex(c *ctx, idx *tensor.Node, a gridAxis, pad string) *tensor.Node {
	s := func(v float64) *tensor.Node { return c.scalar(idx.DType(), v) }
	if pad == "reflection" {
		idx = gridReflect(c, idx, a.xmin, a.xmax)
		idx = tensor.Where(tensor.Less(idx, s(0)), tensor.Ceil(idx), tensor.Floor(idx))
	}
	return tensor.Minimum(tensor.Maximum(idx, s(0)), s(float64(a.size-1)))
}

// gridReflect reflects v into [lo, hi] as often as it takes.
func gridReflect(c *ctx, v *tensor.Node, lo, hi float64) *tensor.Node {
	s := func(x float64) *tensor.Node { return c.scalar(v.DType(), x) }
	rng := hi - lo
	if rng <= 0 {
		return tensor.Mul(v, s(0))
	}
	below, above := tensor.Less(v, s(lo)), tensor.Greater(v, s(hi))
	d := tensor.Where(below, tensor.Sub(s(lo), v), tensor.Sub(v, s(hi)))
	k := tensor.Floor(tensor.Div(d, s(rng)))
	rem := tensor.Sub(d, tensor.Mul(k, s(rng)))
	even := tensor.Equal(tensor.Sub(k, tensor.Mul(tensor.Floor(tensor.Div(k, s(2))), s(2))), s(0))
	low := tensor.Where(even, tensor.Add(s(lo), rem), tensor.Sub(s(hi), rem))
	high := tensor.Where(even, tensor.Sub(s(hi), rem), tensor.Add(s(lo), rem))
	return tensor.Where(below, low, tensor.Where(above, high, v))
}

// cubicKernel is Keys' cubic convolution kernel with a = -0.75 at distances d >= 0.
func cubicKernel(c *ctx, d *tensor.Node, dt tensor.DType) *tensor.Node {
	const a = -0.75
	s := func(v float64) *tensor.Node { return c.scalar(dt, v) }
	d2 := tensor.Mul(d, d)
	d3 := tensor.Mul(d2, d)
	// (a+2)d³ - (a+3)d² + 1 within 1; a d³ - 5a d² + 8a d - 4a within 2.
	near := tensor.Add(tensor.Sub(tensor.Mul(d3, s(a+2)), tensor.Mul(d2, s(a+3))), s(1))
	far := tensor.Sub(tensor.Add(tensor.Sub(tensor.Mul(d3, s(a)), tensor.Mul(d2, s(5*a))), tensor.Mul(d, s(8*a))), s(4*a))
	return tensor.Where(tensor.LessEqual(d, s(1)), near, tensor.Where(tensor.Less(d, s(2)), far, s(0)))
}

// lowerAffineGrid: theta (N, r, r+1) and size (N, C, D1...Dr) give the grid (N, D1...Dr, r)
// of theta times (x, y, ..., 1), the coordinates listing the last axis first.
func lowerAffineGrid(c *ctx) {
	c.requireFloat(0)
	size := c.ints(1)
	r := len(size) - 2
	ts := c.shape(0)
	if r < 1 || len(ts) != 3 || ts[0] != size[0] || ts[1] != r || ts[2] != r+1 {
		c.failf("theta %v and size %v: want (N, r, r+1) and (N, C, r sizes)", ts, size)
	}
	align := c.attrInt("align_corners", 0) != 0
	sp := tensor.Shape(size[2:])
	m := sp.Size()
	base := tensor.New(c.in(0).dtype.Carrier(), m, r+1)
	strides := sp.Strides()
	for p := range m {
		for i := range r {
			// Column i is the coordinate along spatial axis r-1-i.
			a := r - 1 - i
			k, n := p/strides[a]%sp[a], sp[a]
			v := float64(2*k+1)/float64(n) - 1
			if align {
				v = -1 // a single point, as the reference's arange gives
				if n > 1 {
					v += 2 * float64(k) / float64(n-1)
				}
			}
			base.SetFloat(p*(r+1)+i, v)
		}
		base.SetFloat(p*(r+1)+r, 1)
	}
	g := tensor.MatMulT(c.constant(base), c.x(0), false, true) // (N, m, r)
	c.set(0, tensor.Reshape(g, append(append(tensor.Shape{size[0]}, sp...), r)...), c.dtype(0))
}

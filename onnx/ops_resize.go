package onnx

import (
	"math"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// Resize and Upsample, one axis at a time. Nearest-neighbour resizing gathers whole
// slices (exact, any type); linear and cubic resizing multiply along the axis by a
// resampling matrix computed at load, (out, in) with each row holding the taps of one
// output position, which covers every coordinate mode, antialiasing,
// exclude_outside and extrapolation alike.

func init() {
	register(10, lowerResize, "Resize")
	register(7, lowerUpsample, "Upsample")
}

// resizeSpec is a Resize node's configuration.
type resizeSpec struct {
	mode, coord, nearest string
	cubicA               float64
	exclude, antialias   bool
	extrapolation        float64
}

func lowerUpsample(c *ctx) {
	s := c.shape(0)
	var scales []float64
	if c.opset() < 9 {
		f, _ := c.attrFloats("scales")
		for _, v := range f {
			scales = append(scales, float64(v))
		}
	} else {
		scales = c.floats(1)
	}
	if len(scales) != len(s) {
		c.failf("%d scales for rank %d", len(scales), len(s))
	}
	sp := resizeSpec{mode: c.attrString("mode", "nearest"), coord: "asymmetric", nearest: "floor", cubicA: -0.75}
	out := make([]int, len(s))
	for i := range s {
		out[i] = int(math.Floor(float64(s[i]) * scales[i]))
	}
	c.set(0, resize(c, c.x(0), sp, out, scales, nil), c.dtype(0))
}

func lowerResize(c *ctx) {
	s := c.shape(0)
	r := len(s)
	sp := resizeSpec{
		mode:          c.attrString("mode", "nearest"),
		coord:         c.attrString("coordinate_transformation_mode", "half_pixel"),
		nearest:       c.attrString("nearest_mode", "round_prefer_floor"),
		cubicA:        float64(c.attrFloat("cubic_coeff_a", -0.75)),
		exclude:       c.attrInt("exclude_outside", 0) != 0,
		antialias:     c.attrInt("antialias", 0) != 0,
		extrapolation: float64(c.attrFloat("extrapolation_value", 0)),
	}
	if c.opset() < 11 {
		sp.coord, sp.nearest = "asymmetric", "floor"
	}
	axes, ok := c.attrInts("axes")
	if !ok {
		axes = make([]int, r)
		for i := range axes {
			axes[i] = i
		}
	}
	axes = c.axes(axes, r)
	policy := c.attrString("keep_aspect_ratio_policy", "stretch")
	// Inputs: (X, scales) before opset 11, then (X, roi, scales, sizes).
	scaleIn, sizeIn, roiIn := 1, -1, -1
	if c.opset() >= 11 {
		roiIn, scaleIn, sizeIn = 1, 2, 3
	}
	scales := make([]float64, r)
	out := slices.Clone([]int(s))
	for i := range scales {
		scales[i] = 1
	}
	switch {
	case c.has(scaleIn) && c.shape(scaleIn).Size() > 0:
		v := c.floats(scaleIn)
		if len(v) != len(axes) {
			c.failf("%d scales for %d axes", len(v), len(axes))
		}
		for k, a := range axes {
			scales[a] = v[k]
			out[a] = int(math.Floor(float64(s[a]) * v[k]))
		}
	case sizeIn > 0 && c.has(sizeIn):
		v := c.ints(sizeIn)
		if len(v) != len(axes) {
			c.failf("%d sizes for %d axes", len(v), len(axes))
		}
		if policy != "stretch" {
			// One scale for every resized axis: the smallest (not_larger) or the
			// largest (not_smaller) of the per-axis ones.
			f := math.Inf(1)
			if policy == "not_smaller" {
				f = math.Inf(-1)
			}
			for k, a := range axes {
				q := float64(v[k]) / float64(s[a])
				if policy == "not_larger" {
					f = math.Min(f, q)
				} else if policy == "not_smaller" {
					f = math.Max(f, q)
				} else {
					c.failf("keep_aspect_ratio_policy %q", policy)
				}
			}
			for _, a := range axes {
				scales[a] = f
				out[a] = int(math.Round(f * float64(s[a])))
			}
		} else {
			for k, a := range axes {
				out[a] = v[k]
				scales[a] = float64(v[k]) / float64(s[a])
			}
		}
	default:
		c.failf("needs scales or sizes")
	}
	var roi []float64
	if sp.coord == "tf_crop_and_resize" {
		if roiIn < 0 || !c.has(roiIn) {
			c.failf("tf_crop_and_resize needs roi")
		}
		v := c.floats(roiIn)
		if len(v) != 2*len(axes) {
			c.failf("roi has %d values for %d axes", len(v), len(axes))
		}
		roi = make([]float64, 2*r)
		for i := range r {
			roi[i], roi[r+i] = 0, 1
		}
		for k, a := range axes {
			roi[a], roi[r+a] = v[k], v[len(axes)+k]
		}
	}
	c.set(0, resize(c, c.x(0), sp, out, scales, roi), c.dtype(0))
}

// resize resamples every axis of x whose size or coordinates change.
func resize(c *ctx, x *tensor.Node, sp resizeSpec, out []int, scales, roi []float64) *tensor.Node {
	switch sp.mode {
	case "nearest", "linear", "cubic":
	default:
		c.failf("mode %q", sp.mode)
	}
	s := x.Shape()
	for a := range s {
		if out[a] < 0 {
			c.failf("output size %d on axis %d", out[a], a)
		}
		var start, end float64
		if roi != nil {
			start, end = roi[a], roi[len(s)+a]
		}
		coords := make([]float64, out[a])
		for i := range coords {
			coords[i] = sourceCoord(c, sp.coord, float64(i), scales[a], s[a], out[a], start, end)
		}
		identity := out[a] == s[a]
		for i, x := range coords {
			identity = identity && x == float64(i)
		}
		if identity {
			continue
		}
		if sp.mode == "nearest" {
			x = resizeNearest(c, x, a, coords, sp)
		} else {
			x = resizeFilter(c, x, a, coords, scales[a], sp)
		}
	}
	return x
}

// sourceCoord maps output position i of an axis of length in resized to length out to
// its coordinate in the input.
func sourceCoord(c *ctx, mode string, i, scale float64, in, out int, start, end float64) float64 {
	switch mode {
	case "half_pixel":
		return (i+0.5)/scale - 0.5
	case "half_pixel_symmetric":
		adj := float64(out) / (scale * float64(in))
		center := float64(in) / 2
		return center*(1-adj) + (i+0.5)/scale - 0.5
	case "pytorch_half_pixel":
		if out > 1 {
			return (i+0.5)/scale - 0.5
		}
		return 0
	case "align_corners":
		// The resized length is in*scale, not rounded, as the reference computes it.
		if out > 1 {
			return i * float64(in-1) / (scale*float64(in) - 1)
		}
		return 0
	case "asymmetric":
		return i / scale
	case "tf_crop_and_resize":
		if out > 1 {
			return start*float64(in-1) + i*(end-start)*float64(in-1)/(scale*float64(in)-1)
		}
		return 0.5 * (start + end) * float64(in-1)
	}
	c.failf("coordinate_transformation_mode %q", mode)
	return 0
}

// resizeNearest gathers the nearest input slice of each output position.
func resizeNearest(c *ctx, x *tensor.Node, a int, coords []float64, sp resizeSpec) *tensor.Node {
	in := x.Shape()[a]
	idx := tensor.New(tensor.I64, len(coords))
	var outside []int
	for i, v := range coords {
		var k float64
		switch sp.nearest {
		case "round_prefer_floor":
			if v-math.Floor(v) == 0.5 {
				k = math.Floor(v)
			} else {
				k = math.Round(v)
			}
		case "round_prefer_ceil":
			k = math.Floor(v + 0.5)
		case "floor":
			k = math.Floor(v)
		case "ceil":
			k = math.Ceil(v)
		default:
			c.failf("nearest_mode %q", sp.nearest)
		}
		if sp.coord == "tf_crop_and_resize" && (v < 0 || v > float64(in-1)) {
			outside = append(outside, i)
		}
		idx.Int64s()[i] = int64(min(max(int(k), 0), in-1))
	}
	y := tensor.Gather(x, c.constant(idx), a)
	return extrapolate(c, y, a, outside, sp.extrapolation)
}

// extrapolate sets the listed positions of axis a to v.
func extrapolate(c *ctx, y *tensor.Node, a int, outside []int, v float64) *tensor.Node {
	if len(outside) == 0 {
		return y
	}
	s := y.Shape()
	shape := onesOf(len(s))
	shape[a] = s[a]
	m := tensor.New(tensor.Bool, shape...)
	for _, i := range outside {
		m.Bytes()[i] = 1
	}
	return tensor.Where(c.constant(m), c.scalar(y.DType(), v), y)
}

// resizeFilter applies linear or cubic interpolation along axis a as a product with a
// resampling matrix.
func resizeFilter(c *ctx, x *tensor.Node, a int, coords []float64, scale float64, sp resizeSpec) *tensor.Node {
	if !x.DType().IsFloat() {
		c.unsupported("%s resizing of %v", sp.mode, c.dtype(0))
	}
	in := x.Shape()[a]
	w := tensor.New(x.DType(), len(coords), in)
	var outside []int
	for i, v := range coords {
		if sp.coord == "tf_crop_and_resize" && (v < 0 || v > float64(in-1)) {
			outside = append(outside, i)
			continue
		}
		for k, wt := range taps(sp, v, scale, in) {
			w.SetFloat(i*in+k, w.Float(i*in+k)+wt)
		}
	}
	wn := c.constant(w)
	s := x.Shape()
	r := len(s)
	var y *tensor.Node
	switch a {
	case r - 1:
		y = tensor.MatMulT(x, wn, false, true)
	case r - 2:
		y = tensor.MatMul(wn, x)
	default:
		perm := make([]int, r)
		for i := range perm {
			perm[i] = i
		}
		perm[a], perm[r-1] = r-1, a
		y = tensor.Permute(tensor.MatMulT(tensor.Permute(x, perm...), wn, false, true), perm...)
	}
	return extrapolate(c, y, a, outside, sp.extrapolation)
}

// taps returns the weights of the input positions an output at coordinate v reads,
// as a map from position to weight: edge positions repeat (clamped) unless
// exclude_outside drops them and renormalises.
func taps(sp resizeSpec, v, scale float64, in int) map[int]float64 {
	x0 := math.Floor(v)
	ratio := v - x0
	var offs []int
	var ws []float64
	kernelScale := 1.0
	if sp.antialias && scale < 1 {
		kernelScale = scale
	}
	switch sp.mode {
	case "linear":
		start := int(math.Floor(-1/kernelScale) + 1)
		for k := start; k < 2-start; k++ {
			offs = append(offs, k)
			ws = append(ws, math.Max(0, 1-math.Abs((float64(k)-ratio)*kernelScale)))
		}
	case "cubic":
		start := int(math.Floor(-2/kernelScale) + 1)
		for k := start; k < 2-start; k++ {
			offs = append(offs, k)
			ws = append(ws, cubic(math.Abs((float64(k)-ratio)*kernelScale), sp.cubicA))
		}
	}
	out := map[int]float64{}
	total := 0.0
	for i, o := range offs {
		p := int(x0) + o
		if sp.exclude && (p < 0 || p >= in) {
			continue
		}
		total += ws[i]
		out[min(max(p, 0), in-1)] += ws[i]
	}
	if (sp.exclude || kernelScale != 1) && total != 0 {
		for k := range out {
			out[k] /= total
		}
	}
	return out
}

// cubic is the Keys cubic convolution kernel with parameter a at distance t.
func cubic(t, a float64) float64 {
	switch {
	case t <= 1:
		return ((a+2)*t-(a+3))*t*t + 1
	case t < 2:
		return ((a*t-5*a)*t+8*a)*t - 4*a
	}
	return 0
}

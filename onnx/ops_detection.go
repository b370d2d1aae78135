package onnx

import (
	"math"
	"sort"

	"github.com/gml-dev/gml/tensor"
)

// Detection operators. NonMaxSuppression runs on the host: its output size depends on
// the data, and its greedy loop over boxes sorted by score is sequential. The boxes and
// scores are read as host values (a stage boundary when the graph computes them, as in
// a detector), and the selected indices join the rest of the graph as a constant of
// that stage. RoiAlign reads its regions on the host the same way, since the number of
// samples per bin depends on them, and gathers the feature map at the sample points.

func init() {
	register(10, lowerNMS, "NonMaxSuppression")
	register(10, lowerRoiAlign, "RoiAlign")
}

func lowerNMS(c *ctx) {
	c.requireFloat(0)
	c.requireFloat(1)
	bs, ss := c.shape(0), c.shape(1)
	if len(bs) != 3 || bs[2] != 4 || len(ss) != 3 || ss[0] != bs[0] || ss[2] != bs[1] {
		c.failf("boxes %v and scores %v: want (batch, boxes, 4) and (batch, classes, boxes)", bs, ss)
	}
	center := c.attrInt("center_point_box", 0)
	if center != 0 && center != 1 {
		c.failf("center_point_box = %d: want 0 or 1", center)
	}
	maxOut := 0
	if c.has(2) && c.shape(2).Size() > 0 {
		maxOut = c.scalarInt(2)
	}
	iouMax, minScore, useMin := 0.0, 0.0, false
	if c.has(3) && c.shape(3).Size() > 0 {
		iouMax = c.floats(3)[0]
	}
	if c.has(4) && c.shape(4).Size() > 0 {
		minScore, useMin = c.floats(4)[0], true
	}
	var sel []int64
	if maxOut > 0 {
		boxes, scores := c.floats(0), c.floats(1)
		nb, nc, n := bs[0], ss[1], bs[1]
		for b := range nb {
			corners := make([][4]float64, n) // y1, x1, y2, x2 with y1 <= y2, x1 <= x2
			for i := range n {
				v := boxes[(b*n+i)*4:][:4]
				if center == 1 {
					corners[i] = [4]float64{v[1] - v[3]/2, v[0] - v[2]/2, v[1] + v[3]/2, v[0] + v[2]/2}
				} else {
					corners[i] = [4]float64{min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])}
				}
			}
			for k := range nc {
				sc := scores[(b*nc+k)*n:][:n]
				var cand []int
				for i, s := range sc {
					if !useMin || s > minScore {
						cand = append(cand, i)
					}
				}
				// Highest score first; equal scores in box order.
				sort.SliceStable(cand, func(i, j int) bool { return sc[cand[i]] > sc[cand[j]] })
				var kept []int
				for _, i := range cand {
					if len(kept) == maxOut {
						break
					}
					ok := true
					for _, j := range kept {
						if iou(corners[i], corners[j]) > iouMax {
							ok = false
							break
						}
					}
					if ok {
						kept = append(kept, i)
						sel = append(sel, int64(b), int64(k), int64(i))
					}
				}
			}
		}
	}
	out := tensor.New(tensor.I64, len(sel)/3, 3)
	copy(out.Int64s(), sel)
	c.setHost(0, out, Int64)
}

// iou is the intersection over union of two boxes (y1, x1, y2, x2); boxes without area
// overlap nothing.
func iou(a, b [4]float64) float64 {
	areaA := (a[2] - a[0]) * (a[3] - a[1])
	areaB := (b[2] - b[0]) * (b[3] - b[1])
	if areaA <= 0 || areaB <= 0 {
		return 0
	}
	h := min(a[2], b[2]) - max(a[0], b[0])
	w := min(a[3], b[3]) - max(a[1], b[1])
	if h <= 0 || w <= 0 {
		return 0
	}
	inter := h * w
	return inter / (areaA + areaB - inter)
}

// lowerRoiAlign pools each region of interest (rois (R, 4) of x1, y1, x2, y2 in input
// pixels times spatial_scale, on the image batch_indices names) into output_height by
// output_width bins, each the average (or, in max mode, the largest weighted corner)
// of sampling_ratio² bilinear samples (adaptive: ceil(size/bins) per axis), with ONNX
// Runtime's rules at the border. Every (sample, corner) is one tap: an index into the
// feature map and a weight, computed on the host; the taps of a bin are gathered,
// weighted and summed (or maximised) on the engine.
func lowerRoiAlign(c *ctx) {
	c.requireFloat(0)
	xs := c.shape(0)
	if len(xs) != 4 || len(c.shape(1)) != 2 || c.shape(1)[1] != 4 || !c.shape(2).Equal(tensor.Shape{c.shape(1)[0]}) {
		c.failf("X %v, rois %v, batch_indices %v: want (N, C, H, W), (R, 4), (R)", xs, c.shape(1), c.shape(2))
	}
	n, ch, h, w := xs[0], xs[1], xs[2], xs[3]
	oh, ow := c.attrInt("output_height", 1), c.attrInt("output_width", 1)
	ratio := c.attrInt("sampling_ratio", 0)
	scale := float64(c.attrFloat("spatial_scale", 1))
	half := c.opset() >= 16
	switch m := c.attrString("coordinate_transformation_mode", "half_pixel"); m {
	case "half_pixel":
	case "output_half_pixel":
		half = false
	default:
		c.failf("coordinate_transformation_mode %q: want half_pixel or output_half_pixel", m)
	}
	if c.opset() < 16 {
		half = false
	}
	mode := c.attrString("mode", "avg")
	if mode != "avg" && mode != "max" {
		c.failf("mode %q: want avg or max", mode)
	}
	if oh < 1 || ow < 1 || ratio < 0 {
		c.failf("output %dx%d and sampling_ratio %d", oh, ow, ratio)
	}
	rois, batch := c.floats(1), c.ints(2)
	r := len(batch)
	offset := 0.0
	if half {
		offset = 0.5
	}
	type tap struct {
		idx int
		w   float64
	}
	bins := make([][]tap, r*oh*ow)
	most := 1
	for i := range r {
		if batch[i] < 0 || batch[i] >= n {
			c.failf("batch index %d of roi %d is out of range [0, %d)", batch[i], i, n)
		}
		x0, y0 := rois[4*i]*scale-offset, rois[4*i+1]*scale-offset
		rw, rh := rois[4*i+2]*scale-offset-x0, rois[4*i+3]*scale-offset-y0
		if !half {
			rw, rh = max(rw, 1), max(rh, 1)
		}
		bh, bw := rh/float64(oh), rw/float64(ow)
		gh, gw := ratio, ratio
		if ratio == 0 {
			gh, gw = int(math.Ceil(rh/float64(oh))), int(math.Ceil(rw/float64(ow)))
		}
		count := float64(max(gh*gw, 1))
		base := batch[i] * h * w
		for py := range oh {
			for px := range ow {
				var taps []tap
				for iy := range gh {
					y := y0 + float64(py)*bh + (float64(iy)+0.5)*bh/float64(gh)
					for ix := range gw {
						x := x0 + float64(px)*bw + (float64(ix)+0.5)*bw/float64(gw)
						if y < -1 || y > float64(h) || x < -1 || x > float64(w) {
							taps = append(taps, tap{base, 0}) // outside: contributes 0
							continue
						}
						yl, yh, ly := roiAxis(max(y, 0), h)
						xl, xh, lx := roiAxis(max(x, 0), w)
						hy, hx := 1-ly, 1-lx
						div := 1.0
						if mode == "avg" {
							div = count
						}
						taps = append(taps, tap{base + yl*w + xl, hy * hx / div}, tap{base + yl*w + xh, hy * lx / div},
							tap{base + yh*w + xl, ly * hx / div}, tap{base + yh*w + xh, ly * lx / div})
					}
				}
				bins[(i*oh+py)*ow+px] = taps
				most = max(most, len(taps))
			}
		}
	}
	// Bins with fewer taps repeat their first, with weight 0 (avg) or as it is (max).
	idx, wt := tensor.New(tensor.I64, r*oh*ow, most), tensor.New(tensor.F32, r*oh*ow, most)
	for b, taps := range bins {
		if len(taps) == 0 {
			taps = []tap{{0, 0}}
		}
		for k := range most {
			t := taps[0]
			if k < len(taps) {
				t = taps[k]
			} else if mode == "avg" {
				t.w = 0
			}
			idx.Int64s()[b*most+k] = int64(t.idx)
			wt.SetFloat(b*most+k, t.w)
		}
	}
	// (C, N*H*W) gathered at (bins, taps): (C, bins, taps).
	x := tensor.Reshape(tensor.Permute(toF32(c.x(0)), 1, 0, 2, 3), ch, n*h*w)
	v := tensor.Mul(tensor.Gather(x, c.constant(idx), 1), c.constant(wt))
	var y *tensor.Node
	if mode == "avg" {
		y = tensor.Sum(v, []int{2}, false)
	} else {
		y = tensor.Max(v, []int{2}, false)
	}
	y = tensor.Permute(tensor.Reshape(y, ch, r, oh, ow), 1, 0, 2, 3)
	c.set(0, c.cast(y, Float, c.dtype(0), true), c.dtype(0))
}

// roiAxis is ONNX Runtime's bilinear neighbourhood of coordinate v >= 0 on an axis of
// size n: the low and high pixels and the weight of the high one.
func roiAxis(v float64, n int) (lo, hi int, frac float64) {
	lo = int(v)
	if lo >= n-1 {
		return n - 1, n - 1, 0
	}
	return lo, lo + 1, v - float64(lo)
}

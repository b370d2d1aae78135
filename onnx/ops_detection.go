package onnx

import (
	"sort"

	"github.com/gml-dev/gml/tensor"
)

// NonMaxSuppression runs on the host: its output size depends on the data, and its
// greedy loop over boxes sorted by score is sequential. The boxes and scores are read
// as host values (a stage boundary when the graph computes them, as in a detector), and
// the selected indices join the rest of the graph as a constant of that stage.

func init() {
	register(10, lowerNMS, "NonMaxSuppression")
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

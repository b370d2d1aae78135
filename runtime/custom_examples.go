package runtime

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// Three custom ops ship registered, as working examples of the three shapes a custom op
// takes (and for use):
//
//   - row_median: a reduction. tensor.Custom("row_median", []*tensor.Node{x}, shape)
//     with shape x's shape with the last axis 1: the median of each row (the mean of the
//     two middle values for an even length). Its gradient is a second custom op,
//     row_median_grad, which routes each row's gradient to its middle value(s).
//   - row_permute: a gather driven by params. tensor.Custom("row_permute",
//     []*tensor.Node{x}, x.Shape(), perm...) reorders every row: out[j] = x[perm[j]].
//     Its gradient is row_permute with the inverse permutation.
//   - clip_inplace: an in-place update. tensor.CustomInPlace("clip_inplace", x, nil, lo,
//     hi) clamps x's values to [lo, hi]; on a variable it clips the variable itself (a
//     weight-clipping step), elsewhere a copy, with the gradient of a clamp.
func init() {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(RegisterCustomOp("row_median", rowMedian, WithGrad(func(n, gy *tensor.Node) []*tensor.Node {
		x := n.Input(0)
		return []*tensor.Node{tensor.Custom("row_median_grad", []*tensor.Node{x, gy}, x.Shape())}
	})))
	must(RegisterCustomOp("row_median_grad", rowMedianGrad))
	must(RegisterCustomOp("row_permute", rowPermute, WithGrad(func(n, gy *tensor.Node) []*tensor.Node {
		at := n.Attr().(tensor.CustomAttr)
		inv := make([]float64, len(at.Params))
		for j, p := range at.Params {
			if int(p) >= 0 && int(p) < len(inv) {
				inv[int(p)] = float64(j)
			}
		}
		return []*tensor.Node{tensor.Custom("row_permute", []*tensor.Node{gy}, gy.Shape(), inv...)}
	})))
	must(RegisterCustomOp("clip_inplace", clipInPlace, WithGrad(func(n, gy *tensor.Node) []*tensor.Node {
		at := n.Attr().(tensor.CustomAttr)
		x := n.Input(0)
		g, dt := x.Graph(), x.DType()
		lo, hi := g.Scalar(dt, at.Params[0]), g.Scalar(dt, at.Params[1])
		inside := tensor.And(tensor.GreaterEqual(x, lo), tensor.LessEqual(x, hi))
		return []*tensor.Node{tensor.Where(inside, gy, g.Scalar(dt, 0))}
	})))
}

// inputRow returns row r of input i, whose rows are as long as its innermost axis.
func (c *CustomCall) inputRow(i, r int) []float32 {
	s := c.InShapes[i]
	n := 1
	if len(s) > 0 {
		n = s[len(s)-1]
	}
	return c.In[i][r*n : (r+1)*n]
}

func rowMedian(c *CustomCall) error {
	if c.Row != 1 || len(c.In) != 1 || c.InShapes[0].Size() == 0 || c.InShapes[0].Size()/max(c.InShapes[0][len(c.InShapes[0])-1], 1) != c.Rows {
		return fmt.Errorf("row_median takes x and gives x's shape with the last axis 1, have %v -> %v", c.InShapes, c.OutShape)
	}
	var buf []float32
	for r := c.Lo; r < c.Hi; r++ {
		buf = append(buf[:0], c.inputRow(0, r)...)
		slices.Sort(buf)
		m := len(buf) / 2
		if len(buf)%2 == 1 {
			c.Out[r] = buf[m]
		} else {
			c.Out[r] = (buf[m-1] + buf[m]) / 2
		}
	}
	return nil
}

// rowMedianGrad gives each row's gradient to its median element, or half of it to each
// of the two middle elements of an even row (the first such positions for ties).
func rowMedianGrad(c *CustomCall) error {
	if len(c.In) != 2 || !c.InShapes[0].Equal(c.OutShape) {
		return fmt.Errorf("row_median_grad takes (x, gy) and gives x's shape, have %v -> %v", c.InShapes, c.OutShape)
	}
	idx := make([]int, c.Row)
	for r := c.Lo; r < c.Hi; r++ {
		x := c.inputRow(0, r)
		out := c.Out[r*c.Row : (r+1)*c.Row]
		clear(out)
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case x[a] < x[b]:
				return -1
			case x[a] > x[b]:
				return 1
			}
			return 0
		})
		g := c.In[1][r]
		m := len(idx) / 2
		if len(idx)%2 == 1 {
			out[idx[m]] = g
		} else {
			out[idx[m-1]] += g / 2
			out[idx[m]] += g / 2
		}
	}
	return nil
}

func rowPermute(c *CustomCall) error {
	if len(c.In) != 1 || !c.InShapes[0].Equal(c.OutShape) || len(c.Params) != c.Row {
		return fmt.Errorf("row_permute takes x and a permutation of its %d columns as params, have %v and %d params", c.Row, c.InShapes, len(c.Params))
	}
	seen := make([]bool, c.Row)
	for _, p := range c.Params {
		j := int(p)
		if float64(j) != p || j < 0 || j >= c.Row || seen[j] {
			return fmt.Errorf("row_permute: params %v are not a permutation of 0..%d", c.Params, c.Row-1)
		}
		seen[j] = true
	}
	for r := c.Lo; r < c.Hi; r++ {
		x := c.inputRow(0, r)
		out := c.Out[r*c.Row : (r+1)*c.Row]
		for j, p := range c.Params {
			out[j] = x[int(p)]
		}
	}
	return nil
}

func clipInPlace(c *CustomCall) error {
	if len(c.Params) != 2 || c.Params[0] > c.Params[1] {
		return fmt.Errorf("clip_inplace takes params lo <= hi, have %v", c.Params)
	}
	lo, hi := float32(c.Params[0]), float32(c.Params[1])
	for i := c.Lo * c.Row; i < c.Hi*c.Row; i++ {
		c.Out[i] = min(max(c.Out[i], lo), hi)
	}
	return nil
}

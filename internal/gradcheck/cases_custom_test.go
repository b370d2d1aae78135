package gradcheck

import (
	t "github.com/gml-dev/gml/tensor"
)

// Custom ops with gradients: the examples that ship with the runtime (row_median's
// gradient is itself a custom op; row_permute's is row_permute; clip_inplace's a mask).
func customCases() []Case {
	return []Case{
		unary("custom_row_median_odd", gen(Distinct(-1, 1), 3, 5), func(x *t.Node) *t.Node {
			return t.Custom("row_median", []*t.Node{x}, t.Shape{3, 1})
		}),
		unary("custom_row_median_even", gen(Distinct(-1, 1), 2, 6), func(x *t.Node) *t.Node {
			return t.Custom("row_median", []*t.Node{x}, t.Shape{2, 1})
		}),
		unary("custom_row_permute", in(3, 4), func(x *t.Node) *t.Node {
			return t.Square(t.Custom("row_permute", []*t.Node{x}, x.Shape(), 2, 0, 3, 1))
		}),
		unary("custom_clip_inplace", gen(Away(-1, 1, 0.05, -0.4, 0.6), 3, 4), func(x *t.Node) *t.Node {
			return t.Mul(t.CustomInPlace("clip_inplace", x, nil, -0.4, 0.6), x)
		}),
	}
}

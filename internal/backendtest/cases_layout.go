package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the layout ops, in every dtype: they move elements, so results are exact.

var allTypes = []t.DType{t.F32, t.F16, t.BF16, t.I32, t.I64, t.Bool}

func layoutCases() []Case {
	return []Case{
		unary("permute_2d", in(33, 17), func(x *t.Node) *t.Node { return t.Permute(x, 1, 0) }).in(allTypes...),
		unary("permute_4d", in(2, 3, 1, 5), func(x *t.Node) *t.Node { return t.Permute(x, 3, 1, 0, 2) }).in(allTypes...),
		unary("permute_tiles", in(3, 70, 45), func(x *t.Node) *t.Node { return t.Permute(x, 0, 2, 1) }),
		unary("expand_row", in(1, 7), func(x *t.Node) *t.Node { return t.Expand(x, 5, 7) }).in(allTypes...),
		unary("expand_scalar", in(), func(x *t.Node) *t.Node { return t.Expand(x, 3, 2) }),
		unary("expand_middle", in(3, 1, 4), func(x *t.Node) *t.Node { return t.Expand(x, 2, 3, 5, 4) }),
		unary("reshape_then_add", in(4, 6), func(x *t.Node) *t.Node { return t.Add(t.Reshape(x, 6, 4), t.Reshape(x, 6, 4)) }),
		unary("reshape_of_permute", in(3, 4, 5), func(x *t.Node) *t.Node { return t.Reshape(t.Permute(x, 1, 0, 2), 4, 15) }).in(allTypes...),
		binary("concat", in(3, 4, 5), in(3, 2, 5), func(a, b *t.Node) *t.Node { return t.Concat(1, a, b) }).in(allTypes...),
		binary("concat_repeated", in(2, 1), in(2, 3), func(a, b *t.Node) *t.Node { return t.Concat(1, a, b, a) }),
		unary("slice_steps", in(3, 4, 5), func(x *t.Node) *t.Node {
			return t.Slice(x, []int{-1, 1, 0}, []int{-100, 4, 5}, []int{-2, 2, 3})
		}).in(allTypes...),
		unary("slice_axis", in(4, 3), func(x *t.Node) *t.Node { return t.SliceAxis(x, 0, 1, 3) }),
		unary("pad_constant", in(3, 4, 5), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 0, 2}, []int{0, 2, 1}, t.PadConstant, 7) }).in(allTypes...),
		unary("pad_reflect", in(3, 4, 5), func(x *t.Node) *t.Node { return t.Pad(x, []int{0, 2, 3}, []int{2, 1, 4}, t.PadReflect, 0) }).in(allTypes...),
		unary("pad_edge", in(3, 4, 5), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 0, 2}, []int{1, 3, 0}, t.PadEdge, 0) }).in(allTypes...),
		unary("tile", in(3, 1), func(x *t.Node) *t.Node { return t.Tile(x, 2, 3) }).in(allTypes...),
		unary("depth_to_space_dcr", in(2, 8, 3, 2), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "DCR") }).in(allTypes...),
		unary("depth_to_space_crd", in(2, 8, 3, 2), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "CRD") }).in(allTypes...),

		unary("slice_steps_backwards", in(7, 9, 5), func(x *t.Node) *t.Node {
			return t.Slice(x, []int{1, 8, 0}, []int{6, -10, 5}, []int{2, -3, 1})
		}).in(allTypes...),
		unary("slice_negative_inner", in(3, 11), func(x *t.Node) *t.Node { return t.Slice(x, []int{0, -2}, []int{3, -12}, []int{1, -1}) }).in(allTypes...),
		unary("slice_one_row", in(5, 13), func(x *t.Node) *t.Node { return t.SliceAxis(x, 0, 2, 3) }).in(allTypes...),
		unary("pad_constant_2d", in(3, 5), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 2}, []int{2, 3}, t.PadConstant, 1) }).in(allTypes...),
		unary("pad_reflect_3d", in(2, 4, 5), func(x *t.Node) *t.Node { return t.Pad(x, []int{0, 3, 2}, []int{1, 2, 4}, t.PadReflect, 0) }).in(allTypes...),
		unary("pad_edge_unit_axis", in(4, 1, 3), func(x *t.Node) *t.Node { return t.Pad(x, []int{2, 1, 0}, []int{0, 2, 5}, t.PadEdge, 0) }).in(allTypes...),
		unary("pad_vector", in(1), func(x *t.Node) *t.Node { return t.Pad(x, []int{3}, []int{2}, t.PadConstant, -7) }).in(allTypes...),
		unary("tile_3d", in(3, 1, 5), func(x *t.Node) *t.Node { return t.Tile(x, 2, 3, 3) }).in(allTypes...),
		unary("concat_axis0_slices", in(3, 5), func(x *t.Node) *t.Node { return t.Concat(0, x, t.SliceAxis(x, 0, 1, 2), x) }).in(allTypes...),
		unary("concat_axis1_slices", in(3, 7), func(x *t.Node) *t.Node {
			return t.Concat(1, t.SliceAxis(x, 1, 0, 3), x, t.SliceAxis(x, 1, 6, 7))
		}).in(allTypes...),
		unary("concat_mid", in(2, 3, 5), func(x *t.Node) *t.Node { return t.Concat(1, x, x) }).in(allTypes...),
		unary("concat_with_empty", in(2, 3), func(x *t.Node) *t.Node { return t.Concat(1, x, t.SliceAxis(x, 1, 1, 1), x) }).in(allTypes...),
		unary("slice_empty", in(4, 3), func(x *t.Node) *t.Node { return t.Concat(0, t.SliceAxis(x, 0, 2, 2), x) }).in(allTypes...),
		unary("depth_to_space_dcr_wide", in(2, 12, 3, 5), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "DCR") }).in(allTypes...),
		unary("depth_to_space_crd_block3", in(1, 18, 2, 3), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 3, "CRD") }).in(allTypes...),

		grad(unary("reshape", in(2, 3, 2), func(x *t.Node) *t.Node { return t.Square(t.Reshape(x, 3, -1)) })),
		grad(unary("permute", in(2, 3, 4), func(x *t.Node) *t.Node { return t.Permute(x, 2, 0, 1) })),
		grad(unary("transpose", in(2, 3), func(x *t.Node) *t.Node { return t.Transpose(x, 0, 1) })),
		grad(binary("concat_grad", in(2, 1), in(2, 3), func(a, b *t.Node) *t.Node { return t.Concat(1, a, b, a) })),
		grad(unary("split", in(5, 2), func(x *t.Node) *t.Node {
			p := t.Split(x, 0, 2, 3)
			return t.Mul(t.Sum(p[0], nil, false), p[1])
		})),
		grad(unary("slice_steps_grad", in(5, 4), func(x *t.Node) *t.Node { return t.Slice(x, []int{1, 0}, []int{5, 4}, []int{2, 3}) })),
		grad(unary("slice_negative_step", in(5, 3), func(x *t.Node) *t.Node { return t.Slice(x, []int{-1, 1}, []int{0, 3}, []int{-2, 1}) })),
		grad(unary("slice_axis_grad", in(4, 3), func(x *t.Node) *t.Node { return t.SliceAxis(x, 0, 1, 3) })),
		grad(unary("pad_constant_grad", in(2, 3), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 0}, []int{0, 2}, t.PadConstant, 0.5) })),
		grad(unary("pad_reflect_grad", in(3, 4), func(x *t.Node) *t.Node { return t.Pad(x, []int{2, 1}, []int{1, 3}, t.PadReflect, 0) })),
		grad(unary("pad_edge_grad", in(2, 3), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 2}, []int{2, 1}, t.PadEdge, 0) })),
		grad(unary("expand_grad", in(3, 1), func(x *t.Node) *t.Node { return t.Expand(x, 2, 3, 4) })),
		grad(unary("tile_grad", in(2, 3), func(x *t.Node) *t.Node { return t.Tile(x, 2, 3) })),
		grad(unary("squeeze_unsqueeze_flatten", in(2, 1, 3), func(x *t.Node) *t.Node {
			return t.Flatten(t.Unsqueeze(t.Squeeze(x, 1), 0), 1)
		})),
		grad(unary("depth_to_space_dcr_grad", in(1, 8, 2, 3), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "DCR") })),
		grad(unary("depth_to_space_crd_grad", in(1, 8, 2, 3), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "CRD") })),
	}
}

package cpu_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// mapped returns out[i] = xv[src(coordinates of i in out)], or fill when src returns -1.
func mapped(xv []float64, out tensor.Shape, fill float64, src func(c []int) int) []float64 {
	res := make([]float64, out.Size())
	for i := range res {
		if j := src(unflat(i, out)); j >= 0 {
			res[i] = xv[j]
		} else {
			res[i] = fill
		}
	}
	return res
}

func TestLayoutKernels(t *testing.T) {
	s := tensor.Shape{3, 4, 5}
	e := newEnv(t)
	x, xv := e.f32(s...)
	y, yv := e.f32(3, 2, 5)
	col, cv := e.f32(3, 1)
	perm := tensor.Permute(x, 2, 0, 1)
	sl := tensor.Slice(x, []int{-1, 1, 0}, []int{-100, 4, 5}, []int{-2, 2, 3})
	ex := tensor.Expand(col, 2, 3, 4)
	tl := tensor.Tile(col, 2, 3)
	cat := tensor.Concat(1, x, y)
	padC := tensor.Pad(x, []int{1, 0, 2}, []int{0, 2, 1}, tensor.PadConstant, 7)
	padR := tensor.Pad(x, []int{0, 2, 3}, []int{2, 1, 4}, tensor.PadReflect, 0)
	padE := tensor.Pad(x, []int{1, 0, 2}, []int{1, 3, 0}, tensor.PadEdge, 0)
	re := tensor.Reshape(tensor.Permute(x, 1, 0, 2), 4, 15)
	res := e.run(perm, sl, ex, tl, cat, padC, padR, padE, re)

	check(t, "permute", res[0], tensor.Shape{5, 3, 4}, mapped(xv, tensor.Shape{5, 3, 4}, 0, func(c []int) int {
		return flat([]int{c[1], c[2], c[0]}, s)
	}), 0)
	check(t, "slice", res[1], tensor.Shape{2, 2, 2}, mapped(xv, tensor.Shape{2, 2, 2}, 0, func(c []int) int {
		return flat([]int{2 - 2*c[0], 1 + 2*c[1], 3 * c[2]}, s)
	}), 0)
	check(t, "expand", res[2], tensor.Shape{2, 3, 4}, mapped(cv, tensor.Shape{2, 3, 4}, 0, func(c []int) int { return c[1] }), 0)
	check(t, "tile", res[3], tensor.Shape{6, 3}, mapped(cv, tensor.Shape{6, 3}, 0, func(c []int) int { return c[0] % 3 }), 0)
	check(t, "concat", res[4], tensor.Shape{3, 6, 5}, func() []float64 {
		out := tensor.Shape{3, 6, 5}
		r := make([]float64, out.Size())
		for i := range r {
			c := unflat(i, out)
			if c[1] < 4 {
				r[i] = xv[flat(c, s)]
			} else {
				r[i] = yv[flat([]int{c[0], c[1] - 4, c[2]}, tensor.Shape{3, 2, 5})]
			}
		}
		return r
	}(), 0)
	padRef := func(before []int, out tensor.Shape, mode func(j, d int) int) func(c []int) int {
		return func(c []int) int {
			sc := make([]int, 3)
			for a := range c {
				if sc[a] = mode(c[a]-before[a], s[a]); sc[a] < 0 {
					return -1
				}
			}
			return flat(sc, s)
		}
	}
	constant := func(j, d int) int {
		if j < 0 || j >= d {
			return -1
		}
		return j
	}
	reflect := func(j, d int) int {
		if j < 0 {
			j = -j
		}
		if j >= d {
			j = 2*(d-1) - j
		}
		return j
	}
	edge := func(j, d int) int { return min(max(j, 0), d-1) }
	check(t, "pad constant", res[5], tensor.Shape{4, 6, 8}, mapped(xv, tensor.Shape{4, 6, 8}, 7, padRef([]int{1, 0, 2}, nil, constant)), 0)
	check(t, "pad reflect", res[6], tensor.Shape{5, 7, 12}, mapped(xv, tensor.Shape{5, 7, 12}, 0, padRef([]int{0, 2, 3}, nil, reflect)), 0)
	check(t, "pad edge", res[7], tensor.Shape{5, 7, 7}, mapped(xv, tensor.Shape{5, 7, 7}, 0, padRef([]int{1, 0, 2}, nil, edge)), 0)
	check(t, "reshape of permute", res[8], tensor.Shape{4, 15}, mapped(xv, tensor.Shape{4, 15}, 0, func(c []int) int {
		return flat([]int{c[1] / 5, c[0], c[1] % 5}, s)
	}), 0)
}

func TestDepthToSpaceKernel(t *testing.T) {
	for _, mode := range []string{"DCR", "CRD"} {
		e := newEnv(t)
		const b, c, h, w = 2, 3, 2, 3
		xs := tensor.Shape{2, c * b * b, h, w}
		x, xv := e.f32(xs...)
		out := tensor.Shape{2, c, h * b, w * b}
		want := mapped(xv, out, 0, func(o []int) int {
			b1, b2 := o[2]%b, o[3]%b
			ch := b1*b*c + b2*c + o[1]
			if mode == "CRD" {
				ch = o[1]*b*b + b1*b + b2
			}
			return flat([]int{o[0], ch, o[2] / b, o[3] / b}, xs)
		})
		check(t, "depth_to_space "+mode, e.run(tensor.DepthToSpace(x, b, mode))[0], out, want, 0)
	}
}

func TestIndexKernels(t *testing.T) {
	e := newEnv(t)
	xs := tensor.Shape{4, 3, 2}
	x, xv := e.f32(xs...)
	idx := e.feed(tensor.I64, []float64{3, -1, 0, 1, 1}, 5)
	idx2 := e.feed(tensor.I32, []float64{2, -1, 0, -3, 1}, 5, 1)
	ta := e.feed(tensor.I32, []float64{2, 0, 1, 1, 0, 2, 2, 2}, 4, 2, 1)
	upd, uv := e.f32(4, 2, 1)
	gu, guv := e.f32(5, 3, 2)
	labels := e.feed(tensor.I64, []float64{2, 0, 5, -1}, 4)
	res := e.run(tensor.Gather(x, idx, 0), tensor.Gather(x, idx2, 1),
		tensor.TakeAlong(x, ta, 1), tensor.Scatter(x, ta, upd, 1, tensor.ScatterReduceNone),
		tensor.Scatter(x, ta, upd, 1, tensor.ScatterReduceAdd), tensor.ScatterAdd(x, idx, gu, 0),
		tensor.OneHot(labels, 4, tensor.F32))
	norm := func(k, d int) int { return (k + d) % d }
	iv := []int{3, -1, 0, 1, 1}
	check(t, "gather axis 0", res[0], tensor.Shape{5, 3, 2}, mapped(xv, tensor.Shape{5, 3, 2}, 0, func(c []int) int {
		return flat([]int{norm(iv[c[0]], 4), c[1], c[2]}, xs)
	}), 0)
	gs := tensor.Shape{4, 5, 1, 2}
	check(t, "gather axis 1", res[1], gs, mapped(xv, gs, 0, func(c []int) int {
		return flat([]int{c[0], norm([]int{2, -1, 0, -3, 1}[c[1]], 3), c[3]}, xs)
	}), 0)
	tv := []int{2, 0, 1, 1, 0, 2, 2, 2}
	ts := tensor.Shape{4, 2, 1}
	check(t, "take_along", res[2], ts, mapped(xv, ts, 0, func(c []int) int {
		return flat([]int{c[0], tv[flat(c, ts)], c[2]}, xs)
	}), 0)
	scat, scatAdd := slices.Clone(xv), slices.Clone(xv)
	for i, k := range tv {
		c := unflat(i, ts)
		j := flat([]int{c[0], k, c[2]}, xs)
		scat[j] = uv[i]
		scatAdd[j] += uv[i]
	}
	check(t, "scatter", res[3], xs, scat, 0)
	check(t, "scatter add", res[4], xs, scatAdd, 1e-6)
	sa := slices.Clone(xv)
	for j, k := range iv {
		for r := 0; r < 6; r++ {
			sa[norm(k, 4)*6+r] += guv[j*6+r]
		}
	}
	check(t, "scatter_add", res[5], xs, sa, 1e-6)
	check(t, "one_hot", res[6], tensor.Shape{4, 4}, []float64{0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0)
}

func TestIndexOutOfRange(t *testing.T) {
	e := newEnv(t)
	x, _ := e.f32(4, 3)
	idx := e.feed(tensor.I32, []float64{1, 4}, 2)
	for _, n := range []*tensor.Node{tensor.Gather(x, idx, 0), tensor.ScatterAdd(x, idx, tensor.ZerosLike(tensor.Gather(x, idx, 0)), 0)} {
		_, err := cputest.Run([]*tensor.Node{n}, e.feeds)
		if err == nil || !strings.Contains(err.Error(), "index 4 out of range") {
			t.Errorf("%v: error %v, want an index error", n, err)
		}
	}
}

// TestTransposeTiles covers the tiled copy used when the two innermost axes swap.
func TestTransposeTiles(t *testing.T) {
	cases := []struct {
		shape tensor.Shape
		perm  []int
	}{
		{tensor.Shape{37, 45}, []int{1, 0}},
		{tensor.Shape{3, 40, 70}, []int{0, 2, 1}},
		{tensor.Shape{40, 3, 66}, []int{2, 1, 0}},
		{tensor.Shape{2, 33, 5, 9}, []int{0, 3, 2, 1}},
	}
	for _, c := range cases {
		e := newEnv(t)
		x, xv := e.f32(c.shape...)
		h := tensor.Cast(x, tensor.F16)
		out := make(tensor.Shape, len(c.perm))
		for i, p := range c.perm {
			out[i] = c.shape[p]
		}
		want := mapped(xv, out, 0, func(oc []int) int {
			ic := make([]int, len(oc))
			for i, p := range c.perm {
				ic[p] = oc[i]
			}
			return flat(ic, c.shape)
		})
		res := e.run(tensor.Permute(x, c.perm...), tensor.Permute(h, c.perm...))
		check(t, "permute "+c.shape.String(), res[0], out, want, 0)
		check(t, "permute f16 "+c.shape.String(), res[1], out, want, 1e-3)
	}
}

// TestScatterAddLarge covers the split scatter_add (ranges of the indexed axis and of
// the columns) of embedding gradients and of an inner axis, with repeated indices, on
// ragged sizes, in F32 (package vec's add) and I32.
func TestScatterAddLarge(t *testing.T) {
	for _, c := range []struct{ pre, v, dim, m int }{
		{1, 50, 300, 400}, {1, 1000, 128, 2048}, {1, 7, 33, 257}, {3, 33, 7, 1100}, {2, 257, 1, 33}, {1, 1, 257, 7},
	} {
		for _, dt := range []tensor.DType{tensor.F32, tensor.I32} {
			e := newEnv(t)
			x, xv := e.input(dt, -50, 50, c.pre, c.v, c.dim)
			ids := make([]float64, c.m)
			for i := range ids {
				ids[i] = float64(e.rng.IntN(c.v))
			}
			idx := e.feed(tensor.I64, ids, c.m)
			u, uv := e.input(dt, -50, 50, c.pre, c.m, c.dim)
			want := slices.Clone(xv)
			for p := range c.pre {
				for j, k := range ids {
					for col := 0; col < c.dim; col++ {
						want[(p*c.v+int(k))*c.dim+col] += uv[(p*c.m+j)*c.dim+col]
					}
				}
			}
			name := fmt.Sprintf("scatter_add %v %+v", dt, c)
			check(t, name, e.run(tensor.ScatterAdd(x, idx, u, 1))[0], tensor.Shape{c.pre, c.v, c.dim}, want, 1e-4)
		}
	}
}

// TestPermuteShortRows covers the copy that folds short contiguous rows into pieces
// (the heads permute of attention), and repeats them (a tile), on ragged sizes.
func TestPermuteShortRows(t *testing.T) {
	for _, n := range []int{1, 7, 33, 257} {
		for _, inner := range []int{1, 7, 16} {
			s := tensor.Shape{2, n, 3, inner}
			out := tensor.Shape{2, 3, n, inner}
			e := newEnv(t)
			x, xv := e.f32(s...)
			res := e.run(tensor.Permute(x, 0, 2, 1, 3), tensor.Tile(x, 1, 1, 2, 3))
			check(t, "permute", res[0], out, mapped(xv, out, 0, func(c []int) int {
				return flat([]int{c[0], c[2], c[1], c[3]}, s)
			}), 0)
			// A slice of the first inner-1 of each row folds its pieces into rows
			// across the outer axes as well (a single outer axis after merging).
			if inner > 1 {
				sl := e.run(tensor.Slice(x, []int{0, 0, 0, 0}, []int{2, n, 3, inner - 1}, nil))[0]
				ss := tensor.Shape{2, n, 3, inner - 1}
				check(t, "slice", sl, ss, mapped(xv, ss, 0, func(c []int) int { return flat(c, s) }), 0)
			}
			tiled := tensor.Shape{2, n, 6, 3 * inner}
			check(t, "tile", res[1], tiled, mapped(xv, tiled, 0, func(c []int) int {
				return flat([]int{c[0], c[1], c[2] % 3, c[3] % inner}, s)
			}), 0)
		}
	}
}

package cpu_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"

	"github.com/gml-dev/gml/tensor"
)

// refReduce groups the elements of x (shape s) by their coordinates off axes and folds
// each group with f; it returns the output shape (with keepDims) and values.
func refReduce(xv []float64, s tensor.Shape, axes []int, keep bool, f func([]float64) float64) (tensor.Shape, []float64) {
	if len(axes) == 0 {
		for i := range s {
			axes = append(axes, i)
		}
	}
	var out tensor.Shape
	for i, d := range s {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	groups := make([][]float64, out.Size())
	for i, v := range xv {
		c := unflat(i, s)
		var oc []int
		for a := range s {
			switch {
			case !slices.Contains(axes, a):
				oc = append(oc, c[a])
			case keep:
				oc = append(oc, 0)
			}
		}
		o := flat(oc, out)
		groups[o] = append(groups[o], v)
	}
	res := make([]float64, len(groups))
	for i, g := range groups {
		res[i] = f(g)
	}
	return out, res
}

func refSum(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += v
	}
	return s
}

func refVar(corr int) func([]float64) float64 {
	return func(g []float64) float64 {
		m := refSum(g) / float64(len(g))
		ss := 0.0
		for _, v := range g {
			ss += (v - m) * (v - m)
		}
		return ss / float64(len(g)-corr)
	}
}

// reduceOp is a reduction with its float64 reference over one group of elements.
type reduceOp struct {
	name  string
	build func(x *tensor.Node, axes []int, keep bool) *tensor.Node
	ref   func([]float64) float64
}

// reductions are the reductions the tests check against their references.
var reductions = []reduceOp{
	{"sum", tensor.Sum, refSum},
	{"mean", tensor.Mean, func(g []float64) float64 { return refSum(g) / float64(len(g)) }},
	{"max", tensor.Max, func(g []float64) float64 { return slices.Max(g) }},
	{"min", tensor.Min, func(g []float64) float64 { return slices.Min(g) }},
	{"prod", tensor.Prod, func(g []float64) float64 {
		p := 1.0
		for _, v := range g {
			p *= v
		}
		return p
	}},
	{"var0", func(x *tensor.Node, axes []int, keep bool) *tensor.Node { return tensor.Variance(x, axes, keep, 0) }, refVar(0)},
	{"var1", func(x *tensor.Node, axes []int, keep bool) *tensor.Node { return tensor.Variance(x, axes, keep, 1) }, refVar(1)},
}

// reductionsNamed returns the reductions of the given names, in that order.
func reductionsNamed(names ...string) []reduceOp {
	ops := make([]reduceOp, len(names))
	for i, name := range names {
		k := slices.IndexFunc(reductions, func(op reduceOp) bool { return op.name == name })
		ops[i] = reductions[k]
	}
	return ops
}

func TestReduceKernels(t *testing.T) {
	ops := reductions
	shape := tensor.Shape{2, 3, 4}
	axesSets := [][]int{nil, {0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1}, {-1, 0}}
	for _, op := range ops {
		for _, axes := range axesSets {
			for _, keep := range []bool{false, true} {
				e := newEnv(t)
				x, xv := e.f32(shape...)
				outShape, want := refReduce(xv, shape, resolve(axes, 3), keep, op.ref)
				check(t, op.name, e.run(op.build(x, axes, keep))[0], outShape, want, 1e-5)
			}
		}
		// A long full reduction (split across goroutines) and a reduction over size-1 axes.
		e := newEnv(t)
		x, xv := e.input(tensor.F32, 0.999, 1.001, 100003)
		_, want := refReduce(xv, tensor.Shape{100003}, nil, false, op.ref)
		check(t, op.name+" long", e.run(op.build(x, nil, false))[0], tensor.Shape{}, want, 1e-4)
		y, yv := e.f32(1, 5, 1)
		_, want = refReduce(yv, tensor.Shape{1, 5, 1}, []int{0, 2}, false, op.ref)
		if op.name != "var1" {
			check(t, op.name+" size-1 axes", e.run(op.build(y, []int{0, 2}, false))[0], tensor.Shape{5}, want, 1e-5)
		}
	}
}

func resolve(axes []int, rank int) []int {
	var out []int
	for _, a := range axes {
		if a < 0 {
			a += rank
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func TestReduceEmptyAndInt(t *testing.T) {
	e := newEnv(t)
	x, _ := e.f32(0, 3)
	n, nv := e.input(tensor.I64, -50, 50, 3, 4)
	res := e.run(tensor.Sum(x, []int{0}, false), tensor.Prod(x, []int{0}, false), tensor.Mean(x, []int{0}, false),
		tensor.Sum(n, []int{1}, false), tensor.Max(n, []int{0}, true), tensor.Prod(n, nil, false))
	check(t, "sum empty", res[0], tensor.Shape{3}, []float64{0, 0, 0}, 0)
	check(t, "prod empty", res[1], tensor.Shape{3}, []float64{1, 1, 1}, 0)
	check(t, "mean empty", res[2], tensor.Shape{3}, []float64{math.NaN(), math.NaN(), math.NaN()}, 0)
	_, sum := refReduce(nv, tensor.Shape{3, 4}, []int{1}, false, refSum)
	check(t, "int sum", res[3], tensor.Shape{3}, sum, 0)
	// An empty kept axis leaves nothing to reduce into: an empty result, not a division
	// by the zero row length.
	for _, shape := range []tensor.Shape{{3, 0}, {2, 3, 0}, {3, 0, 2}} {
		e := newEnv(t)
		z, _ := e.f32(shape...)
		want := append(tensor.Shape{}, shape[1:]...)
		for i, got := range e.run(tensor.Sum(z, []int{0}, false), tensor.Max(z, []int{0}, false)) {
			check(t, fmt.Sprintf("reduction %d over axis 0 of %v", i, shape), got, want, nil, 0)
		}
	}
	_, mx := refReduce(nv, tensor.Shape{3, 4}, []int{0}, true, func(g []float64) float64 { return slices.Max(g) })
	check(t, "int max", res[4], tensor.Shape{1, 4}, mx, 0)
	p := int64(1)
	for _, v := range nv {
		p *= int64(v)
	}
	check(t, "int prod", res[5], tensor.Shape{}, []float64{float64(p)}, 0)
}

func TestArgCumTopK(t *testing.T) {
	shape := tensor.Shape{3, 4, 5}
	for axis := 0; axis < 3; axis++ {
		e := newEnv(t)
		x, xv := e.f32(shape...)
		vals, idx := tensor.TopK(x, 2, axis, true)
		_, small := tensor.TopK(x, 3, axis, false)
		res := e.run(tensor.ArgMax(x, axis, false), tensor.ArgMin(x, axis, true),
			tensor.CumSum(x, axis, false, false), tensor.CumSum(x, axis, true, true), vals, idx, small)
		argOf := func(better func(a, b float64) bool) func([]float64) float64 {
			return func(g []float64) float64 {
				bi := 0
				for i, v := range g {
					if better(v, g[bi]) {
						bi = i
					}
				}
				return float64(bi)
			}
		}
		os, amax := refReduce(xv, shape, []int{axis}, false, argOf(func(a, b float64) bool { return a > b }))
		check(t, "argmax", res[0], os, amax, 0)
		os, amin := refReduce(xv, shape, []int{axis}, true, argOf(func(a, b float64) bool { return a < b }))
		check(t, "argmin", res[1], os, amin, 0)
		cum, cumExRev := make([]float64, len(xv)), make([]float64, len(xv))
		for i := range xv {
			c := unflat(i, shape)
			for k := 0; k < shape[axis]; k++ {
				cc := slices.Clone(c)
				cc[axis] = k
				v := xv[flat(cc, shape)]
				if k <= c[axis] {
					cum[i] += v
				}
				if k > c[axis] {
					cumExRev[i] += v
				}
			}
		}
		check(t, "cumsum", res[2], shape, cum, 1e-5)
		check(t, "cumsum exclusive reverse", res[3], shape, cumExRev, 1e-5)
		// TopK: sort each line's indices by value.
		ks := shape.Clone()
		ks[axis] = 2
		wantIdx, wantVal := make([]float64, ks.Size()), make([]float64, ks.Size())
		small3 := shape.Clone()
		small3[axis] = 3
		wantSmall := make([]float64, small3.Size())
		for i := range wantIdx {
			c := unflat(i, ks)
			line := make([]int, shape[axis])
			for k := range line {
				line[k] = k
			}
			at := func(k int) float64 { cc := slices.Clone(c); cc[axis] = k; return xv[flat(cc, shape)] }
			sort.SliceStable(line, func(a, b int) bool { return at(line[a]) > at(line[b]) })
			wantIdx[i] = float64(line[c[axis]])
			wantVal[i] = at(line[c[axis]])
		}
		for i := range wantSmall {
			c := unflat(i, small3)
			line := make([]int, shape[axis])
			for k := range line {
				line[k] = k
			}
			at := func(k int) float64 { cc := slices.Clone(c); cc[axis] = k; return xv[flat(cc, shape)] }
			sort.SliceStable(line, func(a, b int) bool { return at(line[a]) < at(line[b]) })
			wantSmall[i] = float64(line[c[axis]])
		}
		check(t, "topk values", res[4], ks, wantVal, 0)
		check(t, "topk indices", res[5], ks, wantIdx, 0)
		check(t, "topk smallest", res[6], small3, wantSmall, 0)
	}
}

// TestReduceInterleavedAxes covers reductions whose reduced and kept axes interleave
// (reduced in memory order, with a reduced or a kept innermost axis) on ragged sizes.
func TestReduceInterleavedAxes(t *testing.T) {
	ops := reductionsNamed("sum", "mean", "max", "min")
	for _, n := range []int{1, 7, 33, 257} {
		shape := tensor.Shape{n, 3, 5, 2}
		for _, axes := range [][]int{{0, 2}, {0, 2, 3}, {1, 3}, {0, 1, 3}} {
			for _, op := range ops {
				e := newEnv(t)
				x, xv := e.f32(shape...)
				outShape, want := refReduce(xv, shape, axes, true, op.ref)
				check(t, op.name, e.run(op.build(x, axes, true))[0], outShape, want, 1e-5)
			}
		}
	}
}

// TestColumnReduceRowSplit covers column reductions over many rows into few outputs,
// which split their rows into blocks: ragged row lengths and counts, one base and
// several, against the float64 reference. Child processes rerun it with one and three
// threads and with the vector routines' Go code (GML_SIMD=go); every run must give the
// same bits, since the blocks do not depend on the thread count.
func TestColumnReduceRowSplit(t *testing.T) {
	ops := reductionsNamed("sum", "mean", "max", "var1")
	h := fnv.New64a()
	for _, inner := range []int{7, 33, 257} {
		for _, rows := range []int{1, 7, 33, 257} {
			if rows*inner > 257*33 {
				continue // the reference is slow; 33 rows of 257 split already
			}
			for _, c := range []struct {
				shape tensor.Shape
				axes  []int
			}{{tensor.Shape{rows, 11, inner}, []int{0, 1}}, {tensor.Shape{3, rows * 11, inner}, []int{1}}} {
				for _, op := range ops {
					e := newEnv(t)
					x, xv := e.f32(c.shape...)
					outShape, want := refReduce(xv, c.shape, c.axes, true, op.ref)
					got := e.run(op.build(x, c.axes, true))[0]
					check(t, fmt.Sprint(op.name, c.shape, c.axes), got, outShape, want, 1e-5)
					h.Write(got.Bytes())
				}
			}
		}
	}
	if f := os.Getenv("GML_TEST_SUM"); f != "" {
		if err := os.WriteFile(f, h.Sum(nil), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		return
	}
	want := h.Sum(nil)
	for _, env := range []string{"GML_THREADS=1", "GML_THREADS=3", "GML_SIMD=go"} {
		f := filepath.Join(t.TempDir(), "sum")
		if out, err := childtest.Run("^TestColumnReduceRowSplit$", env, "GML_TEST_SUM="+f); err != nil {
			t.Fatalf("%s: %v\n%s", env, err, out)
		}
		if got, err := os.ReadFile(f); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: results differ from this process's (%v)", env, err)
		}
	}
}

package tensor

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryOpHasNameAndShapeRule(t *testing.T) {
	for op := Op(1); op < numOps; op++ {
		if opTable[op].name == "" {
			t.Errorf("op %d has no name", op)
		}
		if got, ok := OpByName(op.String()); !ok || got != op {
			t.Errorf("OpByName(%q) = %v, %v", op.String(), got, ok)
		}
		if op.Kind() == KindSource {
			continue
		}
		if !HasShapeRule(op) {
			t.Errorf("op %v has no shape rule", op)
		}
	}
}

// buildIn runs f on a fresh graph and returns the node it built or the error it panicked with.
func buildIn(f func(g *Graph) *Node) (n *Node, err error) {
	err = Catch(func() { n = f(NewGraph()) })
	return n, err
}

func TestShapeRules(t *testing.T) {
	f32 := func(g *Graph, name string, s ...int) *Node { return g.Input(name, F32, s...) }
	i64 := func(g *Graph, name string, s ...int) *Node { return g.Input(name, I64, s...) }
	cases := []struct {
		name  string
		build func(g *Graph) *Node
		dt    DType
		shape Shape
	}{
		{"add broadcast", func(g *Graph) *Node { return Add(f32(g, "a", 2, 1, 3), f32(g, "b", 4, 1)) }, F32, Shape{2, 4, 3}},
		{"add scalar", func(g *Graph) *Node { return Add(f32(g, "a", 2, 3), f32(g, "b")) }, F32, Shape{2, 3}},
		{"add empty", func(g *Graph) *Node { return Add(f32(g, "a", 0, 3), f32(g, "b", 1, 3)) }, F32, Shape{0, 3}},
		{"less", func(g *Graph) *Node { return Less(f32(g, "a", 3), f32(g, "b", 2, 1)) }, Bool, Shape{2, 3}},
		{"where", func(g *Graph) *Node {
			return Where(Greater(f32(g, "c", 3), f32(g, "z")), f32(g, "a", 2, 3), f32(g, "b"))
		}, F32, Shape{2, 3}},
		{"cast", func(g *Graph) *Node { return Cast(f32(g, "a", 2), I32) }, I32, Shape{2}},
		{"sum keep", func(g *Graph) *Node { return Sum(f32(g, "a", 2, 3, 4), []int{-1, 0}, true) }, F32, Shape{1, 3, 1}},
		{"mean all", func(g *Graph) *Node { return Mean(f32(g, "a", 2, 3), nil, false) }, F32, Shape{}},
		{"var", func(g *Graph) *Node { return Variance(f32(g, "a", 2, 3), []int{1}, false, 1) }, F32, Shape{2}},
		{"argmax", func(g *Graph) *Node { return ArgMax(f32(g, "a", 2, 3), -1, false) }, I64, Shape{2}},
		{"topk values", func(g *Graph) *Node { v, _ := TopK(f32(g, "a", 2, 5), 3, 1, true); return v }, F32, Shape{2, 3}},
		{"matmul batch", func(g *Graph) *Node { return MatMul(f32(g, "a", 5, 2, 3), f32(g, "b", 3, 4)) }, F32, Shape{5, 2, 4}},
		{"outer", func(g *Graph) *Node { return Outer(f32(g, "a", 2), f32(g, "b", 3)) }, F32, Shape{2, 3}},
		{"permute", func(g *Graph) *Node { return Permute(f32(g, "a", 2, 3, 4), 2, 0, -2) }, F32, Shape{4, 2, 3}},
		{"transpose", func(g *Graph) *Node { return Transpose(f32(g, "a", 2, 3, 4), 0, -1) }, F32, Shape{4, 3, 2}},
		{"concat", func(g *Graph) *Node { return Concat(-1, f32(g, "a", 2, 3), f32(g, "b", 2, 1)) }, F32, Shape{2, 4}},
		{"slice neg step", func(g *Graph) *Node {
			return Slice(f32(g, "a", 10, 4), []int{-1, 1}, []int{-100, 100}, []int{-3, 2})
		}, F32, Shape{4, 2}},
		{"slice axis", func(g *Graph) *Node { return SliceAxis(f32(g, "a", 3, 5), 1, 1, -1) }, F32, Shape{3, 3}},
		{"split", func(g *Graph) *Node { return Split(f32(g, "a", 3, 5), 1, 2, 3)[1] }, F32, Shape{3, 3}},
		{"pad reflect", func(g *Graph) *Node {
			return Pad(f32(g, "a", 3, 4), []int{0, 2}, []int{1, 3}, PadReflect, 0)
		}, F32, Shape{4, 9}},
		{"expand", func(g *Graph) *Node { return Expand(f32(g, "a", 3, 1), 2, 3, 4) }, F32, Shape{2, 3, 4}},
		{"tile", func(g *Graph) *Node { return Tile(f32(g, "a", 3, 1), 2, 4) }, F32, Shape{6, 4}},
		{"squeeze", func(g *Graph) *Node { return Squeeze(f32(g, "a", 1, 3, 1)) }, F32, Shape{3}},
		{"unsqueeze", func(g *Graph) *Node { return Unsqueeze(f32(g, "a", 3), 0, -1) }, F32, Shape{1, 3, 1}},
		{"flatten", func(g *Graph) *Node { return Flatten(f32(g, "a", 2, 3, 4), 1) }, F32, Shape{2, 12}},
		{"sum_to", func(g *Graph) *Node { return SumTo(f32(g, "a", 5, 2, 3), Shape{2, 1}) }, F32, Shape{2, 1}},
		{"gather", func(g *Graph) *Node { return Gather(f32(g, "a", 4, 5, 6), i64(g, "i", 2, 3), 1) }, F32, Shape{4, 2, 3, 6}},
		{"take_along", func(g *Graph) *Node { return TakeAlong(f32(g, "a", 4, 5), i64(g, "i", 4, 2), 1) }, F32, Shape{4, 2}},
		{"scatter_add", func(g *Graph) *Node {
			return ScatterAdd(f32(g, "a", 4, 5), i64(g, "i", 3), f32(g, "u", 3, 5), 0)
		}, F32, Shape{4, 5}},
		{"one_hot", func(g *Graph) *Node { return OneHot(i64(g, "i", 3), 10, F32) }, F32, Shape{3, 10}},
		{"depth_to_space", func(g *Graph) *Node { return DepthToSpace(f32(g, "a", 1, 8, 2, 3), 2, "") }, F32, Shape{1, 2, 4, 6}},
		{"dropout mask", func(g *Graph) *Node { return DropoutMask(i64(g, "l", 3), g.Input("s", I32), 0.5) }, F32, Shape{3}},
		{"adam", func(g *Graph) *Node {
			v := func(n string) *Node { return g.Var(NewVariable(n, New(F32, 2, 3))) }
			return AdamUpdate(v("p"), f32(g, "g", 2, 3), v("m"), v("v"), f32(g, "lr"), g.Input("t", I64), AdamAttr{Beta1: 0.9, Beta2: 0.999})
		}, F32, Shape{2, 3}},
		{"sparse xent", func(g *Graph) *Node {
			return SparseSoftmaxCrossEntropyPerSample(f32(g, "l", 8, 10), i64(g, "y", 8))
		}, F32, Shape{8}},
		{"huber", func(g *Graph) *Node { return Huber(f32(g, "p", 8, 2), f32(g, "y", 8, 2), 1) }, F32, Shape{}},
		{"lstm", func(g *Graph) *Node {
			h, _ := LSTMCell(f32(g, "x", 2, 3), f32(g, "h", 2, 4), f32(g, "c", 2, 4), f32(g, "wx", 3, 16), f32(g, "wh", 4, 16), f32(g, "b", 16))
			return h
		}, F32, Shape{2, 4}},
		{"gru", func(g *Graph) *Node {
			return GRUCell(f32(g, "x", 2, 3), f32(g, "h", 2, 4), f32(g, "wx", 3, 12), f32(g, "wh", 4, 12), nil, nil)
		}, F32, Shape{2, 4}},
	}
	for _, tc := range cases {
		n, err := buildIn(tc.build)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if n.DType() != tc.dt || !n.Shape().Equal(tc.shape) {
			t.Errorf("%s: got %v%v, want %v%v", tc.name, n.DType(), n.Shape(), tc.dt, tc.shape)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	f32 := func(g *Graph, name string, s ...int) *Node { return g.Input(name, F32, s...) }
	cases := []struct {
		name  string
		build func(g *Graph) *Node
		want  []string // substrings of the error
	}{
		{"add", func(g *Graph) *Node { return Add(f32(g, "a", 2, 3), f32(g, "b", 4)) }, []string{"add", "[2 3]", "[4]"}},
		{"add dtypes", func(g *Graph) *Node { return Add(f32(g, "a", 2), g.Input("b", I32, 2)) }, []string{"add", "f32[2]", "i32[2]"}},
		{"and on floats", func(g *Graph) *Node { return And(f32(g, "a", 2), f32(g, "b", 2)) }, []string{"and", "bool"}},
		{"exp on ints", func(g *Graph) *Node { return Exp(g.Input("a", I32, 2)) }, []string{"exp", "floating"}},
		{"sum axis", func(g *Graph) *Node { return Sum(f32(g, "a", 2), []int{1}, false) }, []string{"sum", "axis 1"}},
		{"max empty", func(g *Graph) *Node { return Max(f32(g, "a", 0, 2), []int{0}, false) }, []string{"max", "empty"}},
		{"matmul", func(g *Graph) *Node { return MatMul(f32(g, "a", 2, 3), f32(g, "b", 4, 5)) }, []string{"matmul", "[2 3]", "[4 5]"}},
		{"concat", func(g *Graph) *Node { return Concat(0, f32(g, "a", 2, 3), f32(g, "b", 2, 4)) }, []string{"concat", "[2 3]", "[2 4]"}},
		{"permute", func(g *Graph) *Node { return Permute(f32(g, "a", 2, 3), 0, 0) }, []string{"permute", "repeats"}},
		{"expand", func(g *Graph) *Node { return Expand(f32(g, "a", 2, 3), 4, 3) }, []string{"expand", "[2 3]", "[4 3]"}},
		{"reflect", func(g *Graph) *Node { return Pad(f32(g, "a", 2), []int{2}, []int{0}, PadReflect, 0) }, []string{"pad", "reflect"}},
		{"gather float idx", func(g *Graph) *Node { return Gather(f32(g, "a", 2), f32(g, "i", 2), 0) }, []string{"gather", "i32 or i64"}},
		{"split", func(g *Graph) *Node { return Split(f32(g, "a", 5), 0, 2, 2)[0] }, []string{"split", "sum to 4"}},
		{"squeeze", func(g *Graph) *Node { return Squeeze(f32(g, "a", 2, 3), 0) }, []string{"squeeze", "size 2"}},
		{"assign", func(g *Graph) *Node { return Assign(f32(g, "a", 2), f32(g, "b", 2)) }, []string{"assign", "variable"}},
		{"mse", func(g *Graph) *Node { return MSE(f32(g, "a", 4, 1), f32(g, "b", 4)) }, []string{"mse", "[4 1]", "[4]"}},
		{"dropout rate", func(g *Graph) *Node { return Dropout(f32(g, "a", 4), g.Input("s", I32), 1) }, []string{"dropout", "rate"}},
		{"lstm", func(g *Graph) *Node {
			h, _ := LSTMCell(f32(g, "x", 2, 3), f32(g, "h", 2, 4), f32(g, "c", 2, 4), f32(g, "wx", 3, 12), f32(g, "wh", 4, 16), nil)
			return h
		}, []string{"lstm_cell", "[3 12]"}},
	}
	for _, tc := range cases {
		_, err := buildIn(tc.build)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
	}
}

func TestAxisErrorsNameOpAndShapeOnce(t *testing.T) {
	_, err := buildIn(func(g *Graph) *Node { return Sum(g.Input("a", F32, 2, 3), []int{2}, false) })
	if err == nil || err.Error() != "tensor: sum: axis 2 out of range for rank 2 (shape [2 3])" {
		t.Errorf("error %v", err)
	}
	_, err = buildIn(func(g *Graph) *Node { return Transpose(g.Input("a", F32, 2, 3), 0, -3) })
	if err == nil || err.Error() != "tensor: transpose: axis -3 out of range for rank 2 (shape [2 3])" {
		t.Errorf("error %v", err)
	}
}

// TestOpTableFacts checks the op table's columns for consistency: every computing op
// accepts some dtype and has a cost; op codes come with a shader; only sources and
// Reshape are free.
func TestOpTableFacts(t *testing.T) {
	for op := Op(1); op < numOps; op++ {
		row := opTable[op]
		if row.dtypes == 0 {
			t.Errorf("%v accepts no dtype", op)
		}
		free := op.Kind() == KindSource || op == OpReshape
		if (row.cost == CostFree) != free {
			t.Errorf("%v: cost class %d", op, row.cost)
		}
		if k := op.GPU(); k.Shader == "" && len(k.Codes) > 0 {
			t.Errorf("%v has op codes but no shader", op)
		}
		if row.noGrad != "" && row.gradMissing != "" {
			t.Errorf("%v has both a no-gradient and a missing-gradient reason", op)
		}
	}
	if !NumericTypes.Has(I64) || NumericTypes.Has(Bool) || FloatTypes.Has(I32) || !AllTypes.Has(Bool) {
		t.Error("the named dtype sets are wrong")
	}
	if got := DTypes(F16, I32); got.String() != "f16|i32" || len(got.List()) != 2 {
		t.Errorf("DTypes(F16, I32) = %v", got)
	}
}

// TestElementwiseDTypes builds every unary and binary op on every dtype: it must
// succeed exactly for the dtypes the op's table row accepts.
func TestElementwiseDTypes(t *testing.T) {
	for op := Op(1); op < numOps; op++ {
		if op.Kind() != KindUnary && op.Kind() != KindBinary || op == OpCast {
			continue
		}
		for dt := DType(0); dt < numDTypes; dt++ {
			_, err := buildIn(func(g *Graph) *Node {
				in := make([]*Node, op.Arity())
				for i := range in {
					in[i] = g.Input("x", dt, 2, 3)
				}
				if op == OpWhere {
					in[1], in[2] = g.Input("a", F32, 2, 3), g.Input("b", F32, 2, 3)
				}
				return Apply(op, nil, in...)
			})
			if want := op.DTypes().Has(dt); (err == nil) != want {
				t.Errorf("%v on %v: error %v, want accepted=%v", op, dt, err, want)
			}
		}
	}
}

// TestFamiliesLineUp checks that each op family, named by a tensor/ops_<family>.go file,
// has its files under the same word in every layer: runtime/cpu/kernels_<family>*.go,
// gpu/ops_<family>*.go and shaders/src/<family>*.comp (but for the families that run
// on the CPU alone); and that every shader the op table names belongs to one of the
// families.
func TestFamiliesLineUp(t *testing.T) {
	// cpuOnly are the families with no GPU layer, and why.
	cpuOnly := map[string]string{"custom": "custom kernels are Go functions, which the GPU cannot call"}
	glob := func(pattern string) []string {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") && !strings.HasSuffix(f, "_example_test.go") {
				out = append(out, f)
			}
		}
		return out
	}
	families := map[string]bool{}
	for _, f := range glob("ops_*.go") {
		families[strings.TrimSuffix(strings.TrimPrefix(f, "ops_"), ".go")] = true
	}
	if len(families) < 5 {
		t.Fatalf("families %v: run from the tensor directory", families)
	}
	for f := range families {
		patterns := []string{"../runtime/cpu/kernels_" + f + "*.go", "../gpu/ops_" + f + "*.go", "../shaders/src/" + f + "*.comp"}
		if cpuOnly[f] != "" {
			patterns = patterns[:1]
		}
		for _, pattern := range patterns {
			if len(glob(pattern)) == 0 {
				t.Errorf("family %s has no %s", f, pattern)
			}
		}
	}
	for op := Op(1); op < numOps; op++ {
		if s := op.GPU().Shader; s != "" && !families[strings.Split(s, "_")[0]] {
			t.Errorf("%v's shader %s.comp belongs to no family (tensor/ops_<family>.go)", op, s)
		}
	}
}

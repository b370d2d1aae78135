package gpu

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// TestEmbeddingClassifierStep runs an embedding classifier's loss, accuracy and
// gradients (Gather, ScatterAdd, TakeAlong, ArgMax, Equal, Cast, OneHot) through the
// runtime on the Vulkan backend and compares them with the CPU backend's. Nodes without
// a shader for their dtype fall back to the CPU; they are logged.
func TestEmbeddingClassifierStep(t *testing.T) {
	openBackend(t).Close()
	r := rand.New(rand.NewPCG(45, 46))
	g := tensor.NewGraph()
	feeds := map[*tensor.Node]*tensor.Tensor{}
	table := typedInput(g, r, feeds, tensor.F32, -1, 1, 20, 16)
	w := typedInput(g, r, feeds, tensor.F32, -1, 1, 16, 5)
	ids := typedInput(g, r, feeds, tensor.I64, 0, 20, 36)
	labels := typedInput(g, r, feeds, tensor.I32, 0, 5, 36)
	logits := tensor.MatMul(tensor.Embedding(table, ids), w)
	loss := tensor.Add(tensor.SparseSoftmaxCrossEntropy(logits, labels),
		tensor.SoftmaxCrossEntropy(logits, tensor.OneHot(labels, 5, tensor.F32), 1))
	hits := tensor.Cast(tensor.Equal(tensor.Cast(tensor.ArgMax(logits, 1, false), tensor.I32), labels), tensor.F32)
	acc := tensor.Mean(hits, nil, false)
	grads := tensor.Grad(loss, []*tensor.Node{table, w})
	outputs := append([]*tensor.Node{loss, acc}, grads...)
	want, err := cputest.Run(outputs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	exe := gpuExecutable(t, outputs)
	if fb := exe.Fallbacks(); len(fb) > 0 {
		t.Logf("%d nodes ran on the CPU: %v", len(fb), fb)
	}
	got, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 1e-5 {
			t.Errorf("output %d (%v): relative error %.3g against the CPU", i, outputs[i], e)
		}
	}
}

// TestIndexOutOfRange feeds one index outside its axis to each index op and checks that
// the run fails with the CPU backend's error (after its "gpu:"/"cpu:" prefix), then that
// the same executable runs correctly once the index is fixed.
func TestIndexOutOfRange(t *testing.T) {
	openBackend(t).Close()
	r := rand.New(rand.NewPCG(47, 48))
	// build makes the graph; idx adds the index input the case feeds: vals, then vals
	// with vals[bad] replaced by value.
	type indexInput func(shape ...int) *tensor.Node
	cases := []struct {
		name  string
		build func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node
		it    tensor.DType
		value float64
		vals  []float64
		bad   int
	}{
		{"gather_i32", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			return []*tensor.Node{tensor.Gather(typedInput(g, r, feeds, tensor.F32, -5, 5, 10, 3), idx(4), 0)}
		}, tensor.I32, 12, []float64{1, 0, 9, -10}, 1},
		{"gather_i64_negative", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			return []*tensor.Node{tensor.Gather(typedInput(g, r, feeds, tensor.I32, -5, 5, 2, 10, 3), idx(3), 1)}
		}, tensor.I64, -11, []float64{3, -1, 4}, 2},
		{"embedding_i64_beyond_int32", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			return []*tensor.Node{tensor.Embedding(typedInput(g, r, feeds, tensor.F32, -1, 1, 6, 4), idx(2, 3))}
		}, tensor.I64, 1 << 40, []float64{0, 5, 2, 3, 1, 4}, 4},
		{"second_of_two_gathers", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			table := typedInput(g, r, feeds, tensor.F32, -1, 1, 6, 4)
			good := tensor.Gather(table, typedInput(g, r, feeds, tensor.I32, 0, 6, 5), 0)
			return []*tensor.Node{good, tensor.Gather(table, idx(3), 0)}
		}, tensor.I32, 6, []float64{5, 0, 1}, 0},
		{"take_along", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			return []*tensor.Node{tensor.TakeAlong(typedInput(g, r, feeds, tensor.F32, -5, 5, 3, 7), idx(3, 2), 1)}
		}, tensor.I32, 7, []float64{0, 6, -7, 2, 3, 1}, 3},
		{"scatter", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			x := typedInput(g, r, feeds, tensor.F32, -5, 5, 5, 4)
			return []*tensor.Node{tensor.Scatter(x, idx(2, 4), typedInput(g, r, feeds, tensor.F32, -5, 5, 2, 4), 0, tensor.ScatterReduceNone)}
		}, tensor.I64, -6, []float64{0, 1, 2, 3, 4, -1, -2, -3}, 5},
		{"scatter_add_embedding_grad", func(g *tensor.Graph, feeds map[*tensor.Node]*tensor.Tensor, idx indexInput) []*tensor.Node {
			table := typedInput(g, r, feeds, tensor.F32, -1, 1, 50, 8)
			return []*tensor.Node{tensor.ScatterAdd(table, idx(3, 2), typedInput(g, r, feeds, tensor.F32, -1, 1, 3, 2, 8), 0)}
		}, tensor.I32, 50, []float64{49, 0, 7, 7, -50, 3}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			var in *tensor.Node
			idx := func(shape ...int) *tensor.Node {
				in = g.Input("idx", c.it, shape...)
				return in
			}
			outputs := c.build(g, feeds, idx)
			feed := func(vals []float64) {
				v, err := tensor.FromFloat64sAs(c.it, in.Shape(), vals)
				if err != nil {
					t.Fatal(err)
				}
				feeds[in] = v
			}
			bad := append([]float64(nil), c.vals...)
			bad[c.bad] = c.value
			feed(bad)
			_, cpuErr := cputest.Run(outputs, feeds)
			if cpuErr == nil {
				t.Fatalf("the CPU accepted index %v", c.value)
			}
			exe := gpuExecutable(t, outputs)
			if fb := exe.Fallbacks(); len(fb) > 0 {
				t.Fatalf("nodes fell back to the CPU: %v", fb)
			}
			_, gpuErr := exe.Run(feeds)
			want := strings.TrimPrefix(cpuErr.Error(), "cpu: ")
			if gpuErr == nil || !strings.HasSuffix(gpuErr.Error(), "gpu: "+want) {
				t.Fatalf("GPU error %v, want one ending in %q", gpuErr, "gpu: "+want)
			}
			feed(c.vals)
			wantOut, err := cputest.Run(outputs, feeds)
			if err != nil {
				t.Fatal(err)
			}
			got, err := exe.Run(feeds)
			if err != nil {
				t.Fatalf("run after the error: %v", err)
			}
			for i := range wantOut {
				if !bytes.Equal(got[i].Bytes(), wantOut[i].Bytes()) {
					t.Errorf("output %d after the error differs from the CPU's:\n got %v\nwant %v", i, head(got[i]), head(wantOut[i]))
				}
			}
		})
	}
}

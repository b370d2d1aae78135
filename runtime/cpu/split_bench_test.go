package cpu

import (
	"fmt"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// The benchmarks here measure how ops of a training step split over the threads (run
// them with GML_THREADS=2 and =16 on the host, -benchtime for short runs): what an op
// costs per size where the split goes from one goroutine to all of them, and what a
// step's optimizer updates cost alone and fused.

// BenchmarkSplitAdd times an add of two vectors of n values, from below elemGrain (one
// goroutine) to 1M values (all of them).
func BenchmarkSplitAdd(b *testing.B) {
	for _, n := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			g := tensor.NewGraph()
			x, y := g.Input("x", tensor.F32, n), g.Input("y", tensor.F32, n)
			s := tensor.Add(x, y)
			benchProgram(b, graphOf(s), true, s)
		})
	}
}

// BenchmarkSplitPermute times the transformer's heads permute, (32, 8, 64, 16) to
// (32, 64, 8, 16): 1 MiB moved in rows of 64 bytes.
func BenchmarkSplitPermute(b *testing.B) {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 32, 8, 64, 16)
	p := tensor.Permute(x, 0, 2, 1, 3)
	benchProgram(b, graphOf(p), true, p)
}

// BenchmarkSplitUpdates times the Adam updates of the parameters of a 4-layer
// transformer of width 128 (68 of them, 0.9M values), as 68 steps and fused into one.
func BenchmarkSplitUpdates(b *testing.B) {
	var sizes []int
	for range 4 {
		sizes = append(sizes, 128*128, 128, 128*128, 128, 128*128, 128, 128*128, 128, // q, k, v, out
			128*512, 512, 512*128, 128, 128, 128, 128, 128) // the MLP, two layer norms
	}
	sizes = append(sizes, 1000*128, 64*128, 128, 128)
	c := newUpdateCase(sizes[:68])
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprint("fused=", fused), func(b *testing.B) {
			benchProgram(b, c.nodes, fused, c.updates...)
		})
	}
}

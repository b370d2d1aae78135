package parallel_test

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// An elementwise add split over the CPUs; ranges of fewer than 4096 elements stay on
// the calling goroutine.
func ExampleFor() {
	a := []float32{1, 2, 3, 4}
	b := []float32{10, 20, 30, 40}
	c := make([]float32, len(a))
	parallel.For(len(a), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			c[i] = a[i] + b[i]
		}
	})
	fmt.Println(c)
	// Output: [11 22 33 44]
}

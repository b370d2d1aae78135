package gemm_test

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
)

// A 2×3 matrix times the transpose of a 2×3 matrix, into a 2×2 result.
func ExampleSgemm() {
	a := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{1, 0, 1, 0, 1, 0}
	c := make([]float32, 4)
	if err := gemm.Sgemm(false, true, 2, 2, 3, 1, a, 3, b, 3, 0, c, 2); err != nil {
		fmt.Println(err)
	}
	fmt.Println(c)
	// Output: [4 2 10 5]
}

// Three products that share the left operand (stride 0), as a batched matmul with a
// broadcast batch dimension does.
func ExampleSgemmStrided() {
	w := []float32{1, 1} // 1×2
	x := []float32{1, 2, 3, 4, 5, 6}
	y := make([]float32, 3)
	if err := gemm.SgemmStrided(false, false, 1, 1, 2, 1, w, 2, 0, x, 1, 2, 0, y, 1, 1, 3); err != nil {
		fmt.Println(err)
	}
	fmt.Println(y)
	// Output: [3 7 11]
}

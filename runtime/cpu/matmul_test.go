package cpu_test

import (
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"

	"github.com/gml-dev/gml/tensor"
)

// refMatMul computes op(a) @ op(b) with broadcast batch axes in float64.
func refMatMul(av, bv []float64, as, bs tensor.Shape, ta, tb bool) (tensor.Shape, []float64) {
	ra, rb := len(as), len(bs)
	m, k := as[ra-2], as[ra-1]
	if ta {
		m, k = k, m
	}
	n := bs[rb-1]
	if tb {
		n = bs[rb-2]
	}
	batch := broadcastShape(as[:ra-2], bs[:rb-2])
	out := append(batch.Clone(), m, n)
	res := make([]float64, out.Size())
	for bi := 0; bi < batch.Size(); bi++ {
		ao := bcast(bi, as[:ra-2], batch) * as[ra-2] * as[ra-1]
		bo := bcast(bi, bs[:rb-2], batch) * bs[rb-2] * bs[rb-1]
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					ai := ao + i*k + p
					if ta {
						ai = ao + p*m + i
					}
					bj := bo + p*n + j
					if tb {
						bj = bo + j*k + p
					}
					s += av[ai] * bv[bj]
				}
				res[(bi*m+i)*n+j] = s
			}
		}
	}
	return out, res
}

func TestMatMulKernel(t *testing.T) {
	cases := []struct {
		a, b   tensor.Shape
		ta, tb bool
	}{
		{tensor.Shape{3, 4}, tensor.Shape{4, 5}, false, false},
		{tensor.Shape{4, 3}, tensor.Shape{4, 5}, true, false},
		{tensor.Shape{3, 4}, tensor.Shape{5, 4}, false, true},
		{tensor.Shape{4, 3}, tensor.Shape{5, 4}, true, true},
		{tensor.Shape{2, 3, 4}, tensor.Shape{4, 5}, false, false},
		{tensor.Shape{2, 3, 4}, tensor.Shape{2, 5, 4}, false, true},
		{tensor.Shape{2, 1, 3, 4}, tensor.Shape{1, 3, 4, 5}, false, false},
		{tensor.Shape{3, 4}, tensor.Shape{2, 4, 5}, false, false},
		{tensor.Shape{2, 4, 3}, tensor.Shape{4, 5}, true, false},
		{tensor.Shape{3, 1, 2, 4}, tensor.Shape{2, 4, 5}, false, false},
		{tensor.Shape{3, 0}, tensor.Shape{0, 5}, false, false},
		{tensor.Shape{0, 4}, tensor.Shape{4, 5}, false, false},
		{tensor.Shape{64, 130}, tensor.Shape{130, 70}, false, false},
	}
	for _, c := range cases {
		e := newEnv(t)
		a, av := e.f32(c.a...)
		b, bv := e.f32(c.b...)
		out, want := refMatMul(av, bv, c.a, c.b, c.ta, c.tb)
		name := "matmul " + c.a.String() + c.b.String()
		check(t, name, e.run(tensor.MatMulT(a, b, c.ta, c.tb))[0], out, want, 1e-4)
	}
}

// TestProductsOnEveryPath reruns the matmul and attention tests in child processes with
// each GEMM kernel forced (GML_GEMM_KERNEL: the Go code of a shape where the CPU cannot
// run its assembly), the portable GEMM (GML_BLAS=go) and the vector routines' Go code
// (GML_SIMD=go), so a machine without AVX-512 still runs the avx512 shape's packing and
// edges under the kernels that use it.
func TestProductsOnEveryPath(t *testing.T) {
	childtest.Rerun(t, "^(TestMatMulKernel|TestAttentionGradKernel|TestAttentionGradEmpty)$",
		"GML_GEMM_KERNEL=avx2", "GML_GEMM_KERNEL=avx512", "GML_BLAS=go", "GML_SIMD=go")
}

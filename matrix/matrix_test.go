package matrix

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randDense(r, c int, rng *rand.Rand) *mat.Dense {
	d := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d.Set(i, j, rng.Float64()*2-1)
		}
	}
	return d
}

func maxDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	d := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			e := math.Abs(a.At(i, j) - b.At(i, j))
			if math.IsNaN(e) {
				return math.Inf(1) // a NaN on either side never passes
			}
			d = math.Max(d, e)
		}
	}
	return d
}

func TestAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := randDense(37, 19, rng)
	b := randDense(19, 23, rng)
	var ab, ata, aat mat.Dense
	ab.Mul(a, b)
	ata.Mul(a.T(), a)
	aat.Mul(a, a.T())
	cases := []struct {
		name string
		got  func(opts ...Option) (*mat.Dense, error)
		want *mat.Dense
	}{
		{"MatMul", func(o ...Option) (*mat.Dense, error) { return MatMul(a, b, o...) }, &ab},
		{"Crossprod", func(o ...Option) (*mat.Dense, error) { return Crossprod(a, o...) }, &ata},
		{"Tcrossprod", func(o ...Option) (*mat.Dense, error) { return Tcrossprod(a, o...) }, &aat},
		{"MatMul rows", func(o ...Option) (*mat.Dense, error) { return MatMul(Rows(a), Rows(b), o...) }, &ab},
	}
	precisions := []struct {
		name string
		tol  float64
	}{{"f64", 1e-12}, {"f32", 1e-4}, {"f16", 3e-2}, {"bf16", 2e-1}}
	for _, c := range cases {
		for _, p := range precisions {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				got, err := c.got(Precision(p.name), Device("cpu"))
				if err != nil {
					t.Fatal(err)
				}
				if d := maxDiff(got, c.want); d > p.tol {
					t.Errorf("max difference from gonum %g, want <= %g", d, p.tol)
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"inner", second(MatMul([][]float64{{1, 2}}, [][]float64{{1, 2}})), "inner dimensions differ: 1x2 times 1x2"},
		{"ragged", second(MatMul([][]float64{{1, 2}, {3}}, [][]float64{{1}})), "row 1 has 1 values"},
		{"type", second(MatMul("x", [][]float64{{1}})), "a is a string"},
		{"precision", second(Crossprod([][]float64{{1}}, Precision("f8"))), `unknown precision "f8"`},
		{"device", second(Crossprod([][]float64{{1}}, Device("tpu"))), `unknown device "tpu"`},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, c.err, c.want)
		}
	}
}

func second(_ *mat.Dense, err error) error { return err }

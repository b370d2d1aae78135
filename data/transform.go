package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/tensor"
)

// rowBytes returns the number of bytes one row (index along axis 0) of t occupies.
func rowBytes(t *tensor.Tensor) (int, error) {
	if t.Shape().Rank() == 0 {
		return 0, fmt.Errorf("data: a scalar has no rows")
	}
	return t.Shape()[1:].Size() * t.DType().Size(), nil
}

// Take returns a new tensor holding rows idx of t (along axis 0), in that order.
func Take(t *tensor.Tensor, idx []int) (*tensor.Tensor, error) {
	rb, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	n := t.Shape()[0]
	shape := append(tensor.Shape{len(idx)}, t.Shape()[1:]...)
	out := tensor.New(t.DType(), shape...)
	src, dst := t.Bytes(), out.Bytes()
	for i, r := range idx {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("data: Take: row %d out of range [0, %d)", r, n)
		}
		copy(dst[i*rb:(i+1)*rb], src[r*rb:(r+1)*rb])
	}
	return out, nil
}

// Rows returns a copy of rows [start, end) of t.
func Rows(t *tensor.Tensor, start, end int) (*tensor.Tensor, error) {
	rb, err := rowBytes(t)
	if err != nil {
		return nil, err
	}
	if start < 0 || end > t.Shape()[0] || start > end {
		return nil, fmt.Errorf("data: Rows [%d, %d) out of range for %d rows", start, end, t.Shape()[0])
	}
	shape := append(tensor.Shape{end - start}, t.Shape()[1:]...)
	return tensor.FromBytes(t.DType(), shape, t.Bytes()[start*rb:end*rb])
}

// OneHot encodes integer class labels (any shape) as F32 vectors of length classes,
// adding a trailing axis. A label outside [0, classes) is an error.
func OneHot(labels *tensor.Tensor, classes int) (*tensor.Tensor, error) {
	if classes <= 0 {
		return nil, fmt.Errorf("data: OneHot: %d classes", classes)
	}
	shape := append(labels.Shape().Clone(), classes)
	out := tensor.New(tensor.F32, shape...)
	o := out.Float32s()
	for i := 0; i < labels.Len(); i++ {
		v := labels.Float(i)
		c := int(v)
		if float64(c) != v || c < 0 || c >= classes {
			return nil, fmt.Errorf("data: OneHot: label %v at %d is not a class in [0, %d)", v, i, classes)
		}
		o[i*classes+c] = 1
	}
	return out, nil
}

// Split shuffles the rows of x and y together with seed and returns the train and test
// parts, the test part holding round(testFraction * rows) rows.
func Split(x, y *tensor.Tensor, testFraction float64, seed uint64) (trainX, trainY, testX, testY *tensor.Tensor, err error) {
	if x.Shape().Rank() == 0 || y.Shape().Rank() == 0 || x.Shape()[0] != y.Shape()[0] {
		return nil, nil, nil, nil, fmt.Errorf("data: Split: x %v and y %v need the same number of rows", x.Shape(), y.Shape())
	}
	if testFraction < 0 || testFraction > 1 || math.IsNaN(testFraction) {
		return nil, nil, nil, nil, fmt.Errorf("data: Split: test fraction %v outside [0, 1]", testFraction)
	}
	n := x.Shape()[0]
	perm := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)).Perm(n)
	nTest := int(math.Round(testFraction * float64(n)))
	parts := make([]*tensor.Tensor, 4)
	for i, spec := range []struct {
		t   *tensor.Tensor
		idx []int
	}{{x, perm[nTest:]}, {y, perm[nTest:]}, {x, perm[:nTest]}, {y, perm[:nTest]}} {
		if parts[i], err = Take(spec.t, spec.idx); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	return parts[0], parts[1], parts[2], parts[3], nil
}

// Scale multiplies every element of a float tensor by f in place and returns it.
func Scale(t *tensor.Tensor, f float64) *tensor.Tensor {
	for i := 0; i < t.Len(); i++ {
		t.SetFloat(i, t.Float(i)*f)
	}
	return t
}

// Standardizer rescales each feature (every position after the batch axis) to zero mean
// and unit variance, with statistics fitted on one tensor and applied to others.
type Standardizer struct {
	Mean, Std []float64
}

// FitStandardizer computes per-feature mean and standard deviation over the rows of x.
// A feature with zero variance keeps a standard deviation of 1.
func FitStandardizer(x *tensor.Tensor) (*Standardizer, error) {
	if x.Shape().Rank() == 0 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("data: FitStandardizer needs at least one row, have shape %v", x.Shape())
	}
	n, f := x.Shape()[0], x.Shape()[1:].Size()
	s := &Standardizer{Mean: make([]float64, f), Std: make([]float64, f)}
	for r := 0; r < n; r++ {
		for j := 0; j < f; j++ {
			s.Mean[j] += x.Float(r*f + j)
		}
	}
	for j := range s.Mean {
		s.Mean[j] /= float64(n)
	}
	for r := 0; r < n; r++ {
		for j := 0; j < f; j++ {
			d := x.Float(r*f+j) - s.Mean[j]
			s.Std[j] += d * d
		}
	}
	for j := range s.Std {
		s.Std[j] = math.Sqrt(s.Std[j] / float64(n))
		if s.Std[j] == 0 {
			s.Std[j] = 1
		}
	}
	return s, nil
}

// Apply returns a standardised F32 copy of x, whose rows must have the fitted feature count.
func (s *Standardizer) Apply(x *tensor.Tensor) (*tensor.Tensor, error) {
	return affine(x, len(s.Mean), func(j int, v float64) float64 { return (v - s.Mean[j]) / s.Std[j] })
}

// MinMax rescales each feature linearly to [0, 1] using the range fitted on one tensor.
type MinMax struct {
	Min, Max []float64
}

// FitMinMax finds per-feature minima and maxima over the rows of x.
func FitMinMax(x *tensor.Tensor) (*MinMax, error) {
	if x.Shape().Rank() == 0 || x.Shape()[0] == 0 {
		return nil, fmt.Errorf("data: FitMinMax needs at least one row, have shape %v", x.Shape())
	}
	n, f := x.Shape()[0], x.Shape()[1:].Size()
	m := &MinMax{Min: make([]float64, f), Max: make([]float64, f)}
	for j := 0; j < f; j++ {
		m.Min[j], m.Max[j] = math.Inf(1), math.Inf(-1)
	}
	for r := 0; r < n; r++ {
		for j := 0; j < f; j++ {
			v := x.Float(r*f + j)
			m.Min[j] = math.Min(m.Min[j], v)
			m.Max[j] = math.Max(m.Max[j], v)
		}
	}
	return m, nil
}

// Apply returns a rescaled F32 copy of x; a constant feature maps to 0.
func (m *MinMax) Apply(x *tensor.Tensor) (*tensor.Tensor, error) {
	return affine(x, len(m.Min), func(j int, v float64) float64 {
		if r := m.Max[j] - m.Min[j]; r > 0 {
			return (v - m.Min[j]) / r
		}
		return 0
	})
}

// affine applies f(feature, value) to every element of x into a new F32 tensor.
func affine(x *tensor.Tensor, features int, f func(j int, v float64) float64) (*tensor.Tensor, error) {
	if x.Shape().Rank() == 0 || x.Shape()[1:].Size() != features {
		return nil, fmt.Errorf("data: rows of shape %v do not have the %d fitted features", x.Shape(), features)
	}
	out := tensor.New(tensor.F32, x.Shape()...)
	o := out.Float32s()
	for i := range o {
		o[i] = float32(f(i%features, x.Float(i)))
	}
	return out, nil
}

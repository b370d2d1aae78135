package nn

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Initializer makes the initial value of a weight a CustomLayer declares: a float32
// tensor of the given shape. Any function of that type works; nn provides the usual
// ones, drawn from the generator SetSeed seeds.
type Initializer func(shape []int) *tensor.Tensor

// Zeros initializes every element to 0 (Keras's default for biases).
func Zeros() Initializer { return func(shape []int) *tensor.Tensor { return filled(0, shape...) } }

// Ones initializes every element to 1 (scales, normalisation gains).
func Ones() Initializer { return func(shape []int) *tensor.Tensor { return filled(1, shape...) } }

// GlorotUniform draws uniformly in ±sqrt(6/(fanIn+fanOut)), Keras's default for
// kernels. The fans follow Keras: a vector has fanIn = fanOut = its length, a matrix
// (in, out) has fanIn = in and fanOut = out, and a higher-rank shape (..., in, out)
// multiplies both by the product of the leading axes (the receptive field).
func GlorotUniform() Initializer {
	return func(shape []int) *tensor.Tensor {
		fanIn, fanOut := fans(shape)
		return glorot(fanIn, fanOut, shape...)
	}
}

// RandomUniform draws uniformly in [lo, hi).
func RandomUniform(lo, hi float64) Initializer {
	return func(shape []int) *tensor.Tensor {
		t := uniformInit((hi-lo)/2, shape...)
		if mid := float32((lo + hi) / 2); mid != 0 {
			d := t.Float32s()
			for i := range d {
				d[i] += mid
			}
		}
		return t
	}
}

// RandomNormal draws from a normal distribution with mean 0 and the given standard
// deviation.
func RandomNormal(stddev float64) Initializer {
	return func(shape []int) *tensor.Tensor {
		t := tensor.New(tensor.F32, shape...)
		d := t.Float32s()
		rngMu.Lock()
		for i := range d {
			d[i] = float32(rng.NormFloat64() * stddev)
		}
		rngMu.Unlock()
		return t
	}
}

// fans returns Keras's fan-in and fan-out of a weight shape.
func fans(shape []int) (in, out int) {
	switch len(shape) {
	case 0:
		return 1, 1
	case 1:
		return shape[0], shape[0]
	}
	field := 1
	for _, d := range shape[:len(shape)-2] {
		field *= d
	}
	return shape[len(shape)-2] * field, shape[len(shape)-1] * field
}

// glorot is Keras's default kernel initialiser: uniform in ±sqrt(6/(fanIn+fanOut)).
func glorot(fanIn, fanOut int, shape ...int) *tensor.Tensor {
	return uniformInit(math.Sqrt(6/float64(fanIn+fanOut)), shape...)
}

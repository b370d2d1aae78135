package backendtest

import (
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// AllCases returns the case table: every op's cases, family by family.
func AllCases() []Case {
	var cs []Case
	for _, family := range [][]Case{elementwiseCases(), reduceCases(), matMulCases(), convCases(), normCases(),
		attentionCases(), layoutCases(), indexCases(), trainingCases(), compositeCases(), quantCases(), ssmCases(), customCases()} {
		cs = append(cs, family...)
	}
	return cs
}

// Helpers that keep the case tables short.

// in is an input of the given shape in the case's dtype, drawn by default.
func in(shape ...int) Input { return Input{Shape: shape} }

// gen is an input of the given shape drawn by g.
func gen(g func(*rand.Rand, int) []float64, shape ...int) Input { return Input{Shape: shape, Gen: g} }

// idx is an I64 index input with fixed values.
func idx(values []float64, shape ...int) Input {
	return Input{Shape: shape, DType: t.I64, Own: true, Values: values}
}

// unary is a case applying f to one input.
func unary(name string, x Input, f func(*t.Node) *t.Node) Case {
	return Case{Name: name, Inputs: []Input{x}, Build: func(x []*t.Node) *t.Node { return f(x[0]) }}
}

// binary is a case applying f to two inputs.
func binary(name string, a, b Input, f func(a, b *t.Node) *t.Node) Case {
	return Case{Name: name, Inputs: []Input{a, b}, Build: func(x []*t.Node) *t.Node { return f(x[0], x[1]) }}
}

// grad marks a case as a gradient case too.
func grad(c Case) Case {
	c.Grad = true
	return c
}

// in marks a case to run in the dtypes dts.
func (c Case) in(dts ...t.DType) Case {
	c.DTypes = dts
	return c
}

// withDecline says why a backend may leave the case's op to the CPU.
func withDecline(c Case, why string) Case {
	c.Decline = why
	return c
}

// tol sets a case's tolerance.
func (c Case) tol(tol float64) Case {
	c.Tol = tol
	return c
}

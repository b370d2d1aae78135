package tensor

import "math"

// Gradient rules of the elementwise ops. Where a function has a kink (relu at 0, clamp
// at its limits, abs at 0) the rule takes the one-sided value that
// internal/backendtest's TestGradientsAtKinks pins.

func init() {
	registerGrad(OpNeg, func(n, gy *Node) []*Node { return []*Node{Neg(gy)} })
	registerGrad(OpAbs, func(n, gy *Node) []*Node { return []*Node{Mul(gy, Sign(n.inputs[0]))} })
	registerGrad(OpExp, func(n, gy *Node) []*Node { return []*Node{Mul(gy, n)} })
	registerGrad(OpLog, func(n, gy *Node) []*Node { return []*Node{Div(gy, n.inputs[0])} })
	registerGrad(OpSqrt, func(n, gy *Node) []*Node { return []*Node{Div(gy, MulScalar(n, 2))} })
	// d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y³.
	registerGrad(OpRsqrt, func(n, gy *Node) []*Node {
		return []*Node{Mul(gy, MulScalar(Mul(n, Square(n)), -0.5))}
	})
	registerGrad(OpSquare, func(n, gy *Node) []*Node { return []*Node{Mul(gy, MulScalar(n.inputs[0], 2))} })
	registerGrad(OpSin, func(n, gy *Node) []*Node { return []*Node{Mul(gy, Cos(n.inputs[0]))} })
	registerGrad(OpCos, func(n, gy *Node) []*Node { return []*Node{Neg(Mul(gy, Sin(n.inputs[0])))} })
	registerGrad(OpTanh, func(n, gy *Node) []*Node { return []*Node{Mul(gy, ScaleBias(Square(n), -1, 1))} })
	registerGrad(OpSigmoid, func(n, gy *Node) []*Node { return []*Node{Mul(gy, Mul(n, ScaleBias(n, -1, 1)))} })
	registerGrad(OpRelu, func(n, gy *Node) []*Node {
		return []*Node{Where(Greater(n.inputs[0], scalarLike(n, 0)), gy, scalarLike(n, 0))}
	})
	registerGrad(OpLeakyRelu, func(n, gy *Node) []*Node {
		a := n.attr.(AlphaAttr).Alpha
		return []*Node{Where(Greater(n.inputs[0], scalarLike(n, 0)), gy, MulScalar(gy, float64(a)))}
	})
	// elu: alpha(eˣ-1) below zero, whose derivative alpha·eˣ is y + alpha.
	registerGrad(OpElu, func(n, gy *Node) []*Node {
		a := n.attr.(AlphaAttr).Alpha
		return []*Node{Where(Greater(n.inputs[0], scalarLike(n, 0)), gy, Mul(gy, AddScalar(n, float64(a))))}
	})
	registerGrad(OpGelu, geluGrad)
	registerGrad(OpSilu, func(n, gy *Node) []*Node {
		x := n.inputs[0]
		s := Sigmoid(x)
		// s + x·s·(1-s) = s·(1 + x·(1-s))
		return []*Node{Mul(gy, Mul(s, AddScalar(Mul(x, ScaleBias(s, -1, 1)), 1)))}
	})
	registerGrad(OpSoftplus, func(n, gy *Node) []*Node { return []*Node{Mul(gy, Sigmoid(n.inputs[0]))} })
	// softsign: d/dx x/(1+|x|) = 1/(1+|x|)².
	registerGrad(OpSoftsign, func(n, gy *Node) []*Node {
		return []*Node{Div(gy, Square(AddScalar(Abs(n.inputs[0]), 1)))}
	})
	registerGrad(OpHardSigmoid, func(n, gy *Node) []*Node {
		at := n.attr.(HardSigmoidAttr)
		z := ScaleBias(n.inputs[0], at.Alpha, at.Beta)
		inside := And(Greater(z, scalarLike(n, 0)), Less(z, scalarLike(n, 1)))
		return []*Node{Where(inside, MulScalar(gy, float64(at.Alpha)), scalarLike(n, 0))}
	})
	// hardswish: 0 below -3, x above 3, x(x+3)/6 between, with derivative (2x+3)/6.
	registerGrad(OpHardSwish, func(n, gy *Node) []*Node {
		x := n.inputs[0]
		mid := Mul(gy, ScaleBias(x, 1.0/3, 0.5))
		return []*Node{Where(Less(x, scalarLike(n, -3)), scalarLike(n, 0),
			Where(Greater(x, scalarLike(n, 3)), gy, mid))}
	})
	registerGrad(OpErf, func(n, gy *Node) []*Node {
		x := n.inputs[0]
		return []*Node{Mul(gy, MulScalar(Exp(Neg(Square(x))), 2/math.Sqrt(math.Pi)))}
	})
	// tan' = 1 + tan², atan' = 1/(1 + x²).
	registerGrad(OpTan, func(n, gy *Node) []*Node { return []*Node{Mul(gy, AddScalar(Square(n), 1))} })
	registerGrad(OpAtan, func(n, gy *Node) []*Node {
		return []*Node{Div(gy, AddScalar(Square(n.inputs[0]), 1))}
	})
	// clamp passes the gradient where Min <= x <= Max, limits included.
	registerGrad(OpClamp, func(n, gy *Node) []*Node {
		at := n.attr.(ClampAttr)
		x := n.inputs[0]
		inside := And(GreaterEqual(x, scalarLike(n, float64(at.Min))), LessEqual(x, scalarLike(n, float64(at.Max))))
		return []*Node{Where(inside, gy, scalarLike(n, 0))}
	})
	registerGrad(OpScale, func(n, gy *Node) []*Node {
		return []*Node{MulScalar(gy, float64(n.attr.(ScaleAttr).Scale))}
	})
	registerGrad(OpCast, func(n, gy *Node) []*Node {
		if x := n.inputs[0]; x.dtype.IsFloat() {
			return []*Node{Cast(gy, x.dtype)}
		}
		return []*Node{nil}
	})

	registerGrad(OpAdd, func(n, gy *Node) []*Node {
		return []*Node{unbroadcast(gy, n.inputs[0]), unbroadcast(gy, n.inputs[1])}
	})
	registerGrad(OpSub, func(n, gy *Node) []*Node {
		return []*Node{unbroadcast(gy, n.inputs[0]), unbroadcast(Neg(gy), n.inputs[1])}
	})
	registerGrad(OpMul, func(n, gy *Node) []*Node {
		a, b := n.inputs[0], n.inputs[1]
		return []*Node{unbroadcast(Mul(gy, b), a), unbroadcast(Mul(gy, a), b)}
	})
	// d(a/b)/db = -a/b² = -y/b.
	registerGrad(OpDiv, func(n, gy *Node) []*Node {
		a, b := n.inputs[0], n.inputs[1]
		return []*Node{unbroadcast(Div(gy, b), a), unbroadcast(Neg(Div(Mul(gy, n), b)), b)}
	})
	registerGrad(OpPow, powGrad)
	// a - b·trunc(a/b): ∂/∂a = 1, ∂/∂b = -trunc(a/b) (where the quotient is not an
	// integer; the function jumps there).
	registerGrad(OpMod, func(n, gy *Node) []*Node {
		a, b := n.inputs[0], n.inputs[1]
		q := Div(Sub(a, n), b) // trunc(a/b), exactly an integer
		return []*Node{unbroadcast(gy, a), unbroadcast(Neg(Mul(gy, q)), b)}
	})
	registerGrad(OpMaximum, func(n, gy *Node) []*Node { return minMaxGrad(n, gy, Greater) })
	registerGrad(OpMinimum, func(n, gy *Node) []*Node { return minMaxGrad(n, gy, Less) })
	registerGrad(OpWhere, func(n, gy *Node) []*Node {
		cond, a, b := n.inputs[0], n.inputs[1], n.inputs[2]
		zero := scalarLike(n, 0)
		return []*Node{nil, unbroadcast(Where(cond, gy, zero), a), unbroadcast(Where(cond, zero, gy), b)}
	})
}

// geluGrad differentiates both GELU forms.
//
//	erf:  y = x·Φ(x),                 y' = Φ(x) + x·φ(x)
//	tanh: y = x/2·(1 + tanh u), u = c(x + 0.044715x³), c = √(2/π),
//	      y' = (1 + t)/2 + x/2·(1 - t²)·c·(1 + 3·0.044715x²), t = tanh u
func geluGrad(n, gy *Node) []*Node {
	x := n.inputs[0]
	if n.attr.(GeluAttr).Form == GeluTanh {
		const k = 0.044715
		c := math.Sqrt(2 / math.Pi)
		x2 := Square(x)
		t := Tanh(MulScalar(Mul(x, ScaleBias(x2, k, 1)), c))
		outer := ScaleBias(t, 0.5, 0.5)
		inner := Mul(Mul(x, ScaleBias(Square(t), float32(-c/2), float32(c/2))), ScaleBias(x2, 3*k, 1))
		return []*Node{Mul(gy, Add(outer, inner))}
	}
	cdf := ScaleBias(Erf(MulScalar(x, 1/math.Sqrt2)), 0.5, 0.5)
	pdf := MulScalar(Exp(MulScalar(Square(x), -0.5)), 1/math.Sqrt(2*math.Pi))
	return []*Node{Mul(gy, Add(cdf, Mul(x, pdf)))}
}

// powGrad: ∂aᵇ/∂a = b·aᵇ⁻¹ and ∂aᵇ/∂b = aᵇ·ln a. The exponent's gradient is taken as 0
// where a <= 0, where the real logarithm does not exist.
func powGrad(n, gy *Node) []*Node {
	a, b := n.inputs[0], n.inputs[1]
	ga := Mul(gy, Mul(b, Pow(a, AddScalar(b, -1))))
	positive := Greater(a, scalarLike(n, 0))
	safeA := Where(positive, a, scalarLike(n, 1))
	gb := Where(positive, Mul(Mul(gy, n), Log(safeA)), scalarLike(n, 0))
	return []*Node{unbroadcast(ga, a), unbroadcast(gb, b)}
}

// minMaxGrad routes the gradient of Maximum (wins = Greater) or Minimum (wins = Less)
// to the winning input and splits it evenly between the inputs where they are equal.
func minMaxGrad(n, gy *Node, wins func(a, b *Node) *Node) []*Node {
	a, b := n.inputs[0], n.inputs[1]
	share := Where(wins(a, b), scalarLike(n, 1), Where(Equal(a, b), scalarLike(n, 0.5), scalarLike(n, 0)))
	ga := Mul(gy, share)
	return []*Node{unbroadcast(ga, a), unbroadcast(Sub(gy, ga), b)}
}

// unbroadcast reduces a gradient of a broadcast result back to the shape of the input
// like (the adjoint of NumPy broadcasting).
func unbroadcast(g, like *Node) *Node {
	if g.shape.Equal(like.shape) {
		return g
	}
	return SumTo(g, like.shape)
}

package backendtest

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// References of the training ops. The in-place ones (Assign and the optimizer updates)
// return the new value of every input they write, in the order of tensor.Op.Writes;
// the interpreter stores them in its variables, and the node's own value is the first.

type writeFunc func(n *tensor.Node, in []*Array) []*Array

var writeRefs [tensor.NumOps]writeFunc

func init() {
	dropout := func(n *tensor.Node, in []*Array) *Array {
		rate := n.Attr().(tensor.DropoutAttr).Rate
		seed := uint32(in[1].Data[0])
		scale := 1 / (1 - float64(rate))
		out := newArray(n.DType(), n.Shape())
		for i := range out.Data {
			if !tensor.DropoutKeep(seed, uint32(i), rate) {
				continue
			}
			out.Data[i] = scale
			if n.Op() == tensor.OpDropout {
				out.Data[i] *= in[0].Data[i]
			}
		}
		return out
	}
	defRef(dropout, tensor.OpDropout, tensor.OpDropoutMask)

	writeRefs[tensor.OpAssign] = func(n *tensor.Node, in []*Array) []*Array {
		return []*Array{in[1].clone()}
	}
	// SGD: v = Momentum·v + g + WeightDecay·p; p -= lr·(Nesterov ? g' + Momentum·v : v).
	writeRefs[tensor.OpSGDUpdate] = func(n *tensor.Node, in []*Array) []*Array {
		at := n.Attr().(tensor.SGDAttr)
		p, g, vel, lr := in[0].clone(), in[1], in[2].clone(), in[3].Data[0]
		mu, wd := float64(at.Momentum), float64(at.WeightDecay)
		for i := range p.Data {
			gi := g.Data[i] + wd*p.Data[i]
			vel.Data[i] = mu*vel.Data[i] + gi
			step := vel.Data[i]
			if at.Nesterov {
				step = gi + mu*vel.Data[i]
			}
			p.Data[i] -= lr * step
		}
		return []*Array{p, vel}
	}
	// Adam: bias-corrected moments, eps added outside the square root; the weight decay
	// joins the gradient (Adam with L2) or scales the parameter (AdamW, Decoupled).
	writeRefs[tensor.OpAdamUpdate] = func(n *tensor.Node, in []*Array) []*Array {
		at := n.Attr().(tensor.AdamAttr)
		p, g, m, v := in[0].clone(), in[1], in[2].clone(), in[3].clone()
		lr, t := in[4].Data[0], in[5].Data[0]
		b1, b2, eps, wd := float64(at.Beta1), float64(at.Beta2), float64(at.Eps), float64(at.WeightDecay)
		c1, c2 := 1/(1-math.Pow(b1, t)), 1/(1-math.Pow(b2, t))
		decay, gwd := 1.0, wd
		if at.Decoupled {
			decay, gwd = 1-lr*wd, 0
		}
		for i := range p.Data {
			gi := g.Data[i] + gwd*p.Data[i]
			m.Data[i] = b1*m.Data[i] + (1-b1)*gi
			v.Data[i] = b2*v.Data[i] + (1-b2)*gi*gi
			p.Data[i] = p.Data[i]*decay - lr*(m.Data[i]*c1)/(math.Sqrt(v.Data[i]*c2)+eps)
		}
		return []*Array{p, m, v}
	}
}

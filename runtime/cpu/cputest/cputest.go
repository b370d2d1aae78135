// Package cputest runs graphs on the CPU backend directly, without the runtime's
// scheduler, for tests of ops, kernels and gradients. It gives every node its own buffer
// except where the backend contract says buffers are shared (Reshape aliases its input;
// in-place ops alias the variable they write), uploads feeds and variables' initial
// values, prepares one segment of all the nodes the outputs need, runs it once and
// downloads the outputs. Packages whose own tests are in package cpu cannot import it
// (an import cycle); tests in other packages, or in an external _test package, can.
package cputest

import (
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/tensor"
)

// Run computes outputs (nodes of one graph) with every OpInput they depend on fed from
// feeds, and returns one host tensor per output. Building errors (*tensor.Error panics)
// are not caught: build the graph first.
func Run(outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	p, err := Prepare(outputs, feeds)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	if err := p.Run(); err != nil {
		return nil, err
	}
	return p.Fetch()
}

// Program is a prepared graph on its own CPU backend, for tests that run it repeatedly
// (allocation counts, in-place updates across runs).
type Program struct {
	be      *cpu.Backend
	seg     *runtime.Segment
	prog    runtime.Program
	outputs []*tensor.Node
}

// Prepare uploads the feeds and variables and prepares the outputs' ancestors.
func Prepare(outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor) (*Program, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("cputest: no outputs")
	}
	nodes := ancestors(outputs)
	be := cpu.New()
	seg := &runtime.Segment{Nodes: nodes, Buffers: map[*tensor.Node]runtime.Buffer{}, Escapes: map[*tensor.Node]bool{}}
	for _, o := range outputs {
		seg.Escapes[o] = true
	}
	for _, n := range nodes {
		if !be.Supports(n) {
			return nil, fmt.Errorf("cputest: the CPU backend does not support %v", n)
		}
		if b, ok := aliasOf(n, seg); ok {
			seg.Buffers[n] = b
			continue
		}
		b, err := be.Alloc(int64(n.DType().Bytes(n.Shape().Size())), runtime.PoolActivations)
		if err != nil {
			return nil, err
		}
		seg.Buffers[n] = b
		var src *tensor.Tensor
		switch n.Op() {
		case tensor.OpInput:
			t, ok := feeds[n]
			if !ok {
				return nil, fmt.Errorf("cputest: input %v is not fed", n)
			}
			if t.DType() != n.DType() || !t.Shape().Equal(n.Shape()) {
				return nil, fmt.Errorf("cputest: input %v fed with %v%v", n, t.DType(), t.Shape())
			}
			src = t
		case tensor.OpVariable:
			src = n.Variable().Init()
		}
		if src != nil {
			if err := be.Upload(b, src.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	prog, err := be.Prepare(seg)
	if err != nil {
		return nil, err
	}
	return &Program{be: be, seg: seg, prog: prog, outputs: outputs}, nil
}

// Run computes the graph once; variables keep their updated values between runs.
func (p *Program) Run() error { return p.prog.Run(nil) }

// Fetch downloads the outputs.
func (p *Program) Fetch() ([]*tensor.Tensor, error) {
	res := make([]*tensor.Tensor, len(p.outputs))
	for i, o := range p.outputs {
		res[i] = tensor.New(o.DType(), o.Shape()...)
		if err := p.be.Download(p.seg.Buffers[o], res[i].Bytes()); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Release frees the prepared program and its backend.
func (p *Program) Release() {
	p.prog.Release()
	p.be.Close()
}

// aliasOf returns the buffer n shares with an input under the backend contract.
func aliasOf(n *tensor.Node, seg *runtime.Segment) (runtime.Buffer, bool) {
	if n.Op() == tensor.OpReshape {
		return seg.Buffers[n.Input(0)], true
	}
	if w := n.Op().Writes(); len(w) > 0 {
		return seg.Buffers[n.Input(w[0])], true
	}
	return nil, false
}

// ancestors returns the nodes outputs depend on, in graph order.
func ancestors(outputs []*tensor.Node) []*tensor.Node {
	g := outputs[0].Graph()
	need := make([]bool, g.Len())
	for _, o := range outputs {
		need[o.ID()] = true
	}
	all := g.Nodes()
	var out []*tensor.Node
	for i := len(all) - 1; i >= 0; i-- {
		if !need[i] {
			continue
		}
		for _, x := range all[i].Inputs() {
			need[x.ID()] = true
		}
	}
	for i, n := range all {
		if need[i] {
			out = append(out, n)
		}
	}
	return out
}

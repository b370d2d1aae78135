package cpu

import (
	"fmt"
	"time"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// program is a prepared segment: one closure per computing node, in order.
type program struct {
	nodes []*tensor.Node
	steps []func() error
	flops []float64 // the work of each step: its node's and that of the nodes it does
}

// Prepare resolves every node of seg to its kernel closure. Constants are copied into
// their buffers here, once; inputs and variables are uploaded by the runtime. A Reshape
// whose output shares its input's buffer (the scheduler's aliasing) costs nothing; one
// given its own buffer is a copy.
func (c *Backend) Prepare(seg *runtime.Segment) (runtime.Program, error) {
	if c.closed.Load() {
		return nil, fmt.Errorf("cpu: Prepare after Close")
	}
	mem, err := segmentMemory(seg)
	if err != nil {
		return nil, err
	}
	escapes := func(*tensor.Node) bool { return true }
	if seg.Escapes != nil {
		escapes = func(n *tensor.Node) bool { return seg.Escapes[n] }
	}
	fused, owners := fuse(seg.Nodes, mem, escapes)
	work := map[*tensor.Node]float64{}
	for _, n := range seg.Nodes {
		if n.Op().Kind() == tensor.KindSource && owners[n] == nil {
			continue
		}
		// A node's work lands on the step that does it: its owner's, or the owner's
		// owner where a fusion moved that one's work on too (a pool into a convolution).
		// The walk is bounded so that a wrong record cannot hang Prepare.
		o := n
		for i := 0; owners[o] != nil && i < len(seg.Nodes); i++ {
			o = owners[o]
		}
		work[o] += runtime.FLOPs(n)
	}
	p := &program{}
	for i, n := range seg.Nodes {
		switch n.Op() {
		case tensor.OpInput, tensor.OpVariable:
			continue
		case tensor.OpConst:
			copy(mem[i].out, n.Value().Bytes())
			continue
		}
		step, ok := fused[n]
		if !ok {
			if step, err = prepareNode(n, mem[i].out, mem[i].in); err != nil {
				return nil, fmt.Errorf("cpu: %v: %w", n, err)
			}
		}
		if step != nil {
			p.nodes = append(p.nodes, n)
			p.steps = append(p.steps, step)
			p.flops = append(p.flops, work[n])
		}
	}
	return p, nil
}

// nodeMem is the memory of one node of a segment: its output and its inputs'.
type nodeMem struct {
	out []byte
	in  [][]byte
}

// segmentMemory resolves the memory of every node of seg, in order.
func segmentMemory(seg *runtime.Segment) ([]nodeMem, error) {
	mem := make([]nodeMem, len(seg.Nodes))
	for i, n := range seg.Nodes {
		out, err := nodeMemory(seg, n)
		if err != nil {
			return nil, err
		}
		mem[i].out = out
		if n.Op().Kind() == tensor.KindSource {
			continue
		}
		mem[i].in = make([][]byte, len(n.Inputs()))
		for j, x := range n.Inputs() {
			if mem[i].in[j], err = nodeMemory(seg, x); err != nil {
				return nil, fmt.Errorf("%w (input %d of %v)", err, j, n)
			}
		}
	}
	return mem, nil
}

// prepareNode returns the closure computing n, or nil when n needs no work.
func prepareNode(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	if n.Op() == tensor.OpReshape {
		if sameMemory(out, in[0]) {
			return nil, nil
		}
		return func() error { copy(out, in[0]); return nil }, nil
	}
	if f := lookup(n.Op(), keyDType(n)); f != nil {
		return f(n, out, in)
	}
	if needsWidening(n) {
		if f := lookup(n.Op(), tensor.F32); f != nil {
			return widen(n, out, in, f)
		}
	}
	return nil, fmt.Errorf("no CPU kernel for %v on %v inputs", n.Op(), keyDType(n))
}

// nodeMemory returns the bytes of n's buffer in seg, sliced to n's size.
func nodeMemory(seg *runtime.Segment, n *tensor.Node) ([]byte, error) {
	b, ok := seg.Buffers[n]
	if !ok {
		return nil, fmt.Errorf("cpu: segment has no buffer for %v", n)
	}
	data, err := hostBytes(b)
	if err != nil {
		return nil, err
	}
	size := n.DType().Bytes(n.Shape().Size())
	if len(data) < size {
		return nil, fmt.Errorf("cpu: buffer of %d bytes is too small for %v (%d bytes)", len(data), n, size)
	}
	return data[:size:size], nil
}

// sameMemory reports whether two slices start at the same address.
func sameMemory(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return &a[0] == &b[0]
}

// Run executes the steps in order; with a profile it times each node. A kernel that
// panics (a bug, never bad data, which kernels report as errors) fails the run with an
// error naming the node instead of ending the process.
func (p *program) Run(prof *runtime.Profile) (err error) {
	at := -1
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cpu: kernel panicked: %v", r)
			if at >= 0 {
				err = fmt.Errorf("cpu: %v: kernel panicked: %v", p.nodes[at], r)
			}
		}
	}()
	if prof == nil {
		for i, step := range p.steps {
			at = i
			if err := step(); err != nil {
				return fmt.Errorf("cpu: %v: %w", p.nodes[i], err)
			}
		}
		return nil
	}
	for i, step := range p.steps {
		at = i
		t0 := time.Now()
		if err := step(); err != nil {
			return fmt.Errorf("cpu: %v: %w", p.nodes[i], err)
		}
		prof.RecordWork(p.nodes[i], time.Since(t0), p.flops[i])
	}
	return nil
}

// Release drops the closures; the segment's buffers belong to the runtime.
func (p *program) Release() {
	p.nodes, p.steps = nil, nil
}

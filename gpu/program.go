package gpu

import (
	"fmt"
	"time"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// opImpl is the GPU implementation of one op.
type opImpl struct {
	// supports refines Backend.Supports beyond "the op has a shader and F32 data"
	// (shapes, attributes, ranks); nil accepts every node.
	supports func(d *Device, n *tensor.Node) bool
	// record adds the node's dispatches to r.
	record func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error
	// anyType lists inputs that may have a dtype other than F32.
	anyType []int
	// typed ops check every dtype in supports themselves; Supports skips its F32 rule.
	typed bool
}

func (o opImpl) anyTypeInput(i int) bool {
	for _, j := range o.anyType {
		if i == j {
			return true
		}
	}
	return false
}

// ops maps each op with a shader to its implementation; the ops_*.go files fill it.
var ops = map[tensor.Op]opImpl{}

// program is a prepared segment: its nodes recorded into one command buffer, resubmitted
// by every Run. A second recording with timestamps is made the first time a run asks
// for a profile, so that profiling off costs nothing.
type program struct {
	b      *Backend
	seg    *runtime.Segment
	plain  *Recording
	timed  *Recording
	timedN []*tensor.Node // the node of each timed dispatch, in order
}

// Prepare uploads the segment's constants and records its dispatches.
func (b *Backend) Prepare(seg *runtime.Segment) (runtime.Program, error) {
	for _, n := range seg.Nodes {
		if n.Op() != tensor.OpConst {
			continue
		}
		buf, err := segBuffer(seg, n)
		if err != nil {
			return nil, err
		}
		if err := b.d.Upload(Copy{Buf: buf, Data: n.Value().Bytes()}); err != nil {
			return nil, fmt.Errorf("gpu: uploading %v: %w", n, err)
		}
	}
	p := &program{b: b, seg: seg}
	rc, _, err := p.record(false)
	if err != nil {
		return nil, err
	}
	p.plain = rc
	return p, nil
}

func segBuffer(seg *runtime.Segment, n *tensor.Node) (*Buffer, error) {
	rb, ok := seg.Buffers[n]
	if !ok {
		return nil, fmt.Errorf("gpu: segment has no buffer for %v", n)
	}
	buf, err := devBuffer(rb)
	if err != nil {
		return nil, err
	}
	if need := uint64(n.DType().Bytes(n.Shape().Size())); buf.size < need {
		return nil, fmt.Errorf("gpu: buffer of %d bytes is too small for %v (%d bytes)", buf.size, n, need)
	}
	return buf, nil
}

// record records every computing node; with timed, it also returns the node of each
// timed dispatch.
func (p *program) record(timed bool) (*Recording, []*tensor.Node, error) {
	r, err := p.b.d.newRecorder(timed)
	if err != nil {
		return nil, nil, err
	}
	var owners []*tensor.Node
	for _, n := range p.seg.Nodes {
		switch n.Op() {
		case tensor.OpInput, tensor.OpConst, tensor.OpVariable:
			continue
		}
		op, ok := ops[n.Op()]
		if !ok {
			r.Discard()
			return nil, nil, fmt.Errorf("gpu: no shader for %v", n)
		}
		out, err := segBuffer(p.seg, n)
		if err != nil {
			r.Discard()
			return nil, nil, err
		}
		in := make([]*Buffer, len(n.Inputs()))
		for i, x := range n.Inputs() {
			if in[i], err = segBuffer(p.seg, x); err != nil {
				r.Discard()
				return nil, nil, fmt.Errorf("%w (input %d of %v)", err, i, n)
			}
		}
		before := r.timedCount()
		if err := op.record(r, n, out, in); err != nil {
			r.Discard()
			return nil, nil, fmt.Errorf("gpu: %v: %w", n, err)
		}
		for i := before; i < r.timedCount(); i++ {
			owners = append(owners, n)
		}
	}
	rc, err := r.End()
	return rc, owners, err
}

// Run submits the recording; with a profile, it runs the timed recording and records
// each node's GPU time.
func (p *program) Run(prof *runtime.Profile) error {
	if p.plain.Stale() {
		// The outside product engine turned a product (or itself) off: record again,
		// with those products on the shaders.
		rc, _, err := p.record(false)
		if err != nil {
			return err
		}
		p.plain.Release()
		p.plain = rc
		if p.timed != nil {
			p.timed.Release()
			p.timed = nil
		}
	}
	if prof == nil {
		_, err := p.plain.Run()
		return err
	}
	if p.timed == nil {
		rc, owners, err := p.record(true)
		if err != nil {
			return err
		}
		p.timed, p.timedN = rc, owners
	}
	tm, err := p.timed.Run()
	if err != nil {
		return err
	}
	per := map[*tensor.Node]float64{}
	var order []*tensor.Node
	for i, t := range tm {
		n := p.timedN[i]
		if _, seen := per[n]; !seen {
			order = append(order, n)
		}
		per[n] += t.Ns
	}
	for _, n := range order {
		prof.Record(n, time.Duration(per[n]))
	}
	return nil
}

// Release frees the recordings; the segment's buffers belong to the runtime.
func (p *program) Release() {
	if p.plain != nil {
		p.plain.Release()
	}
	if p.timed != nil {
		p.timed.Release()
	}
}

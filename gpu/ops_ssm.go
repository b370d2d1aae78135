package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// The state-space and linear-attention recurrences, forward and backward:
// ssm_conv.comp (Mamba's convolution), ssm_scan.comp (the selective scan, one
// invocation per channel) and ssm_heads.comp (RWKV-6, GLA and RWKV-7, one workgroup per
// head of a sequence with the state in registers). The backward passes keep state
// checkpoints and recomputed chunks in scratch that lives with the recording.

// ssmChunk is the number of tokens between checkpoints (the shaders' CK).
const ssmChunk = 32

// ssmScanGroup is the workgroup size of the scan's backward pass; it sums ∂B and ∂C
// over its channels with one invocation per state element, so the state size N may be
// at most half of it.
const ssmScanGroup = 64

// maxHeadSize bounds the head size of ssm_heads.comp: one invocation per line of the
// state, and an S×(S+1) reduction array in shared memory.
const maxHeadSize = 64

func init() {
	f32 := func(n *tensor.Node) bool {
		for _, x := range n.Inputs() {
			if x.DType() != tensor.F32 {
				return false
			}
		}
		return n.DType() == tensor.F32 && wordSized(n)
	}
	conv := opImpl{typed: true, record: recordSSMConv, supports: func(_ *Device, n *tensor.Node) bool { return f32(n) }}
	ops[tensor.OpSSMConv], ops[tensor.OpSSMConvGrad] = conv, conv
	scan := opImpl{typed: true, record: recordSSMScan, supports: func(_ *Device, n *tensor.Node) bool {
		return f32(n) && 2*n.Input(2).Shape()[1] <= ssmScanGroup
	}}
	ops[tensor.OpSSMScan], ops[tensor.OpSSMScanGrad] = scan, scan
	heads := opImpl{typed: true, record: recordHeads, supports: func(_ *Device, n *tensor.Node) bool {
		return f32(n) && n.Input(0).Shape()[3] <= maxHeadSize
	}}
	for _, op := range []tensor.Op{tensor.OpWKV6, tensor.OpWKV6Grad, tensor.OpGLA, tensor.OpGLAGrad, tensor.OpWKV7, tensor.OpWKV7Grad} {
		ops[op] = heads
	}
}

func recordSSMConv(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	xs := n.Input(0).Shape()
	b, t, d, k := xs[0], xs[1], xs[2], n.Input(1).Shape()[1]
	gy := in[0]
	if n.Op() == tensor.OpSSMConvGrad {
		gy = in[3]
	}
	w := []uint32{uint32(b), uint32(t), uint32(d), uint32(k), f32Off(in[0]), f32Off(in[1]), f32Off(in[2]), f32Off(gy), f32Off(out)}
	args := []Arg{In(in[0]), In(in[1]), In(in[2]), In(gy), Out(out)}
	pass := func(mode uint32, count int) error {
		if count == 0 {
			return nil
		}
		kn, err := r.d.Kernel("ssm_conv", 5, groupSize, mode)
		if err != nil {
			return err
		}
		return r.Dispatch(kn, gridFor(count), words(w), n.Op().String(), args...)
	}
	if n.Op() == tensor.OpSSMConv {
		return pass(0, b*t*d)
	}
	if err := pass(1, b*(t+k-1)*d); err != nil {
		return err
	}
	return pass(2, d*k)
}

func recordSSMScan(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	xs := n.Input(0).Shape()
	b, t, d, ns := xs[0], xs[1], xs[2], n.Input(2).Shape()[1]
	if b*d*ns == 0 {
		return nil
	}
	grad := n.Op() == tensor.OpSSMScanGrad
	gy, ws := in[0], out
	if grad {
		gy = in[6]
		chunks := (t + ssmChunk - 1) / ssmChunk
		groups := (d + ssmScanGroup - 1) / ssmScanGroup
		size := b*d*(chunks+ssmChunk+1)*ns + 2*groups*b*t*ns + b*d*ns
		var err error
		if ws, err = r.scratchBuffer(uint64(4 * size)); err != nil {
			return err
		}
	}
	w := []uint32{uint32(b), uint32(t), uint32(d)}
	for _, x := range []*Buffer{in[0], in[1], in[2], in[3], in[4], in[5], gy, out, ws} {
		w = append(w, f32Off(x))
	}
	args := []Arg{In(in[0]), In(in[1]), In(in[2]), In(in[3]), In(in[4]), In(in[5]), In(gy), Out(out), Out(ws)}
	kernel := func(mode uint32) (*Kernel, error) {
		return r.d.Kernel("ssm_scan", 9, ssmScanGroup, uint32(ns), mode, ssmChunk)
	}
	label := n.Op().String()
	if !grad {
		k, err := kernel(0)
		if err != nil {
			return err
		}
		return r.Dispatch(k, [3]uint32{ceilDiv(b*d, ssmScanGroup), 1, 1}, words(w), label, args...)
	}
	k, err := kernel(1)
	if err != nil {
		return err
	}
	if err := r.Dispatch(k, [3]uint32{ceilDiv(d, ssmScanGroup), uint32(b), 1}, words(w), label, args...); err != nil {
		return err
	}
	if k, err = kernel(2); err != nil {
		return err
	}
	return r.Dispatch(k, [3]uint32{uint32(min(int(ceilDiv(b*t*ns+d*ns, ssmScanGroup)), maxGroups)), 1, 1}, words(w), label, args...)
}

// headOps numbers the per-head ops as ssm_heads.comp's OP constant does, with the
// number of token vectors each takes.
var headOps = map[tensor.Op]struct{ code, vectors uint32 }{
	tensor.OpWKV6: {0, 4}, tensor.OpWKV6Grad: {0, 4},
	tensor.OpGLA: {1, 4}, tensor.OpGLAGrad: {1, 4},
	tensor.OpWKV7: {2, 6}, tensor.OpWKV7Grad: {2, 6},
}

func recordHeads(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	xs := n.Input(0).Shape()
	b, t, h, s := xs[0], xs[1], xs[2], xs[3]
	if b*h*s == 0 {
		return nil
	}
	op := headOps[n.Op()]
	grad := n.Op() == tensor.OpWKV6Grad || n.Op() == tensor.OpGLAGrad || n.Op() == tensor.OpWKV7Grad
	var vecs [6]*Buffer
	for i := range vecs {
		vecs[i] = in[0]
		if uint32(i) < op.vectors {
			vecs[i] = in[i]
		}
	}
	u, s0 := in[0], in[op.vectors]
	if op.code == 0 {
		u, s0 = in[4], in[5]
	}
	gy, ws := in[0], out
	if grad {
		gy = in[len(in)-1]
		chunks := (t + ssmChunk - 1) / ssmChunk
		var err error
		if ws, err = r.scratchBuffer(uint64(4 * b * h * ((chunks+ssmChunk+1)*s*s + s))); err != nil {
			return err
		}
	}
	var scale float32
	if at, ok := n.Attr().(tensor.GLAAttr); ok {
		scale = at.Scale
	}
	w := []uint32{uint32(b), uint32(t), uint32(h)}
	for _, x := range append(vecs[:], u, s0, gy, out, ws) {
		w = append(w, f32Off(x))
	}
	w = append(w, math.Float32bits(scale))
	args := []Arg{In(vecs[0]), In(vecs[1]), In(vecs[2]), In(vecs[3]), In(vecs[4]), In(vecs[5]), In(u), In(s0), In(gy), Out(out), Out(ws)}
	mode := uint32(0)
	if grad {
		mode = 1
	}
	k, err := r.d.Kernel("ssm_heads", 11, uint32(s), op.code, mode, ssmChunk)
	if err != nil {
		return err
	}
	if err := r.Dispatch(k, [3]uint32{uint32(b * h), 1, 1}, words(w), n.Op().String(), args...); err != nil {
		return err
	}
	if !grad || op.code != 0 {
		return nil
	}
	// RWKV-6's ∂u: the per-sequence sums left in scratch, added over sequences.
	if k, err = r.d.Kernel("ssm_heads", 11, uint32(s), op.code, 2, ssmChunk); err != nil {
		return err
	}
	return r.Dispatch(k, [3]uint32{uint32(h), 1, 1}, words(w), n.Op().String(), args...)
}

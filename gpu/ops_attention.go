package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

func init() {
	ops[tensor.OpAttention] = opImpl{record: recordAttention, supports: func(d *Device, n *tensor.Node) bool {
		_, ok := attentionPlan(d, n)
		return ok && fitsIndexing(d, n)
	}}
	ops[tensor.OpRoPE] = opImpl{record: recordRoPE, anyType: []int{1}, supports: func(d *Device, n *tensor.Node) bool {
		pos := n.Input(1).DType()
		return (pos == tensor.I32 || pos == tensor.I64) && fitsIndexing(d, n)
	}}
}

// attnThreads is the workgroup size of attention.comp.
const attnThreads = 128

// attnPlan is one attention dispatch: the shader's tile sizes and the push constants.
type attnPlan struct {
	bq, bkv, dmax uint32
	grid          [3]uint32 // (query or key tiles, batch entries, 1)
	push          []uint32  // without the buffer offsets
}

// attnSharedBytes is the shared memory attention.comp declares for a tile.
func attnSharedBytes(bq, bkv, dmax uint32) uint32 {
	return 4 * (2*bq*dmax + bkv*(dmax+1) + bkv*dmax + bq*bkv + 3*bq)
}

// attnGeom is the geometry of an attention node, forward or backward: lengths, feature
// sizes, batch entries (batch × heads), the heads each row of an operand holds (H in
// the AttentionBTHD layout, else 1), the feature size the shaders pad to, and the
// mask's broadcast strides (rows, columns, and up to three groups of leading axes as
// (size, stride)).
type attnGeom struct {
	tq, tk, d, dv, batch, heads int
	dmax                        uint32
	mRow, mCol                  uint32
	lead                        [3][2]uint32
}

// attentionGeometry reads the geometry of n, whose optional mask is input maskInput; it
// reports false for shapes the shaders do not cover (no keys, feature sizes
// above 256, a mask whose leading axes do not collapse to three, or more batch entries
// than a grid axis holds).
func attentionGeometry(n *tensor.Node, layout tensor.AttentionLayout, maskInput int) (attnGeom, bool) {
	lead, heads, tq, d := layout.Split(n.Input(0).Shape())
	_, _, tk, _ := layout.Split(n.Input(1).Shape())
	_, _, _, dv := layout.Split(n.Input(2).Shape())
	g := attnGeom{tq: tq, tk: tk, d: d, dv: dv, batch: lead.Size(), heads: heads,
		lead: [3][2]uint32{{1, 0}, {1, 0}, {1, 0}}}
	if g.tk == 0 || max(g.d, g.dv) > 256 || g.batch > maxGroups {
		return attnGeom{}, false
	}
	g.dmax = 32
	for int(g.dmax) < max(g.d, g.dv) {
		g.dmax *= 2
	}
	if len(n.Inputs()) > maskInput {
		groups, st, ok := maskStrides(append(lead.Clone(), g.tq, g.tk), n.Input(maskInput).Shape())
		if !ok {
			return attnGeom{}, false
		}
		g.mRow, g.mCol = st[len(lead)], st[len(lead)+1]
		copy(g.lead[3-len(groups):], groups)
	}
	return g, true
}

// push returns the push constants shared by the attention shaders, before and after
// the buffer offsets.
func (g attnGeom) push(scale float32) (head, tail []uint32) {
	return []uint32{uint32(g.tq), uint32(g.tk), uint32(g.d), uint32(g.dv)},
		[]uint32{math.Float32bits(scale), g.mRow, g.mCol, g.lead[1][0], g.lead[2][0], g.lead[0][1], g.lead[1][1], g.lead[2][1],
			uint32(g.heads)}
}

// attnTiles picks the largest (BQ, BKV) tile whose shared memory, by the shader's
// formula, fits the device.
func attnTiles(d *Device, dmax uint32, shared func(bq, bkv, dmax uint32) uint32) (bq, bkv uint32, ok bool) {
	for _, t := range [][2]uint32{{16, 32}, {16, 16}, {8, 16}, {8, 8}, {4, 8}, {4, 4}} {
		if shared(t[0], t[1], dmax) <= d.Info.SharedMemory {
			return t[0], t[1], true
		}
	}
	return 0, 0, false
}

// attentionPlan picks tiles that fit the device's shared memory for the feature sizes
// and resolves the mask's broadcast strides; false for shapes the shader does not cover.
func attentionPlan(d *Device, n *tensor.Node) (attnPlan, bool) {
	at := n.Attr().(tensor.AttentionAttr)
	g, ok := attentionGeometry(n, at.Layout, 3)
	if !ok {
		return attnPlan{}, false
	}
	bq, bkv, ok := attnTiles(d, g.dmax, attnSharedBytes)
	if !ok || (g.tq+int(bq)-1)/int(bq) > maxGroups {
		return attnPlan{}, false
	}
	head, tail := g.push(at.Scale)
	grid := [3]uint32{uint32((g.tq + int(bq) - 1) / int(bq)), uint32(g.batch), 1}
	return attnPlan{bq: bq, bkv: bkv, dmax: g.dmax, grid: grid, push: append(head, tail...)}, true
}

// maskStrides returns the mask's element stride along every axis of out (0 where it
// broadcasts) and its leading axes (all but the last two) merged into at most three
// groups of (size, stride); false when more groups remain.
func maskStrides(out, mask tensor.Shape) ([][2]uint32, []uint32, bool) {
	r := len(out)
	st := make([]uint32, r)
	stride := uint32(1)
	for i := r - 1; i >= 0; i-- {
		j := i - (r - len(mask))
		if j < 0 || mask[j] == 1 {
			continue
		}
		st[i] = stride
		stride *= uint32(mask[j])
	}
	var groups [][2]uint32
	for i := 0; i < r-2; i++ {
		if out[i] == 1 {
			continue
		}
		if last := len(groups) - 1; last >= 0 && groups[last][1] == st[i]*uint32(out[i]) {
			groups[last] = [2]uint32{groups[last][0] * uint32(out[i]), st[i]}
			continue
		}
		groups = append(groups, [2]uint32{uint32(out[i]), st[i]})
	}
	return groups, st, len(groups) <= 3
}

// recordAttention records the flash-attention forward: one workgroup per tile of
// queries of one batch entry.
func recordAttention(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	if n.Shape().Size() == 0 {
		return nil
	}
	p, _ := attentionPlan(r.d, n)
	mask := in[0]
	if len(in) == 4 {
		mask = in[3]
	}
	causal := n.Attr().(tensor.AttentionAttr).Causal
	k, err := r.d.Kernel("attention", 5, attnThreads, p.bq, p.bkv, p.dmax, b32(causal), b32(len(in) == 4))
	if err != nil {
		return err
	}
	push := append(append(p.push[:4:4], f32Off(in[0]), f32Off(in[1]), f32Off(in[2]), f32Off(mask), f32Off(out)), p.push[4:]...)
	return r.Dispatch(k, p.grid, words(push), "attention", In(in[0]), In(in[1]), In(in[2]), In(mask), Out(out))
}

// recordRoPE rotates feature pairs with the host's frequencies, uploaded once into a
// buffer the recording owns. (They were specialisation constants once; 66 constants
// crashed lavapipe's pipeline compiler now and then.)
func recordRoPE(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	s := n.Shape()
	if s.Size() == 0 {
		return nil
	}
	at := n.Attr().(tensor.RoPEAttr)
	rk := s.Rank()
	d := s[rk-1]
	freqs := tensor.RoPEFrequencies(at.Base, at.Dims)
	fb, err := r.scratchBuffer(uint64(4 * max(len(freqs), 1)))
	if err != nil {
		return err
	}
	if len(freqs) > 0 {
		if err := r.d.Upload(Copy{Buf: fb, Data: Float32Bytes(freqs)}); err != nil {
			return err
		}
	}
	k, err := r.d.Kernel("attention_rope", 4, groupSize, b32(n.Input(1).DType() == tensor.I64))
	if err != nil {
		return err
	}
	rows := s.Size() / d
	push := words([]uint32{uint32(rows), uint32(s[rk-2]), uint32(d), uint32(at.Dims), f32Off(in[0]), uint32(in[1].off / 4), f32Off(fb), f32Off(out)})
	return r.Dispatch(k, gridFor(rows*(d-at.Dims/2)), push, "rope", In(in[0]), In(in[1]), In(fb), Out(out))
}

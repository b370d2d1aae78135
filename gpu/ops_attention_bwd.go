package gpu

import (
	"github.com/gml-dev/gml/tensor"
)

// The flash-attention backward: each OpAttentionGrad node is one dispatch of one of the
// three variants of attention_bwd.comp (statistics, ∂q, ∂k|∂v), so the scheduler orders
// the passes like any other nodes.

func init() {
	ops[tensor.OpAttentionGrad] = opImpl{record: recordAttentionGrad, supports: func(d *Device, n *tensor.Node) bool {
		_, ok := attentionGradPlan(d, n)
		return ok && fitsIndexing(d, n)
	}}
}

// attnBwdShader names the variant of each backward result.
var attnBwdShader = [...]string{
	tensor.AttentionStats:  "attention_bwd_stats",
	tensor.AttentionGradQ:  "attention_bwd_q",
	tensor.AttentionGradKV: "attention_bwd_kv",
}

// attnBwdSharedBytes returns the shared memory each variant of attention_bwd.comp
// declares for a tile (the sums of its shared arrays).
func attnBwdSharedBytes(out tensor.AttentionGradOutput) func(bq, bkv, dmax uint32) uint32 {
	return func(bq, bkv, dmax uint32) uint32 {
		keys := bkv * (dmax + 1) // one padded tile of key rows
		switch out {
		case tensor.AttentionStats:
			return 4 * (bq*dmax + keys + bq*bkv + 2*bq)
		case tensor.AttentionGradQ:
			return 4 * (3*bq*dmax + 2*keys + bq*bkv + 2*bq)
		}
		return 4 * (2*keys + 2*bq*dmax + 2*bq*bkv + 2*bkv*dmax + 2*bq)
	}
}

// attentionGradPlan picks the tiles of n's pass and its push constants (without the
// buffer offsets); false for shapes the shader does not cover.
func attentionGradPlan(d *Device, n *tensor.Node) (attnPlan, bool) {
	at := n.Attr().(tensor.AttentionGradAttr)
	g, ok := attentionGeometry(n, at.Layout, at.MaskInput())
	if !ok {
		return attnPlan{}, false
	}
	bq, bkv, ok := attnTiles(d, g.dmax, attnBwdSharedBytes(at.Output))
	if !ok || (g.tq+int(bq)-1)/int(bq) > maxGroups || (g.tk+int(bkv)-1)/int(bkv) > maxGroups {
		return attnPlan{}, false
	}
	head, tail := g.push(at.Scale)
	grid := [3]uint32{uint32((g.tq + int(bq) - 1) / int(bq)), uint32(g.batch), 1}
	if at.Output == tensor.AttentionGradKV {
		grid[0] = uint32((g.tk + int(bkv) - 1) / int(bkv))
	}
	return attnPlan{bq: bq, bkv: bkv, dmax: g.dmax, grid: grid, push: append(head, tail...)}, true
}

// recordAttentionGrad records one pass: a workgroup per tile of queries (statistics, ∂q)
// or of keys (∂k|∂v) of one batch entry.
func recordAttentionGrad(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	if n.Shape().Size() == 0 {
		return nil
	}
	at := n.Attr().(tensor.AttentionGradAttr)
	p, _ := attentionGradPlan(r.d, n)
	mi := at.MaskInput()
	hasMask := len(in) > mi
	stats, mask := in[0], in[0] // unused bindings get any buffer
	if at.Output != tensor.AttentionStats {
		stats = in[4]
	}
	if hasMask {
		mask = in[mi]
	}
	k, err := r.d.Kernel(attnBwdShader[at.Output], 7, attnThreads, p.bq, p.bkv, p.dmax, b32(at.Causal), b32(hasMask))
	if err != nil {
		return err
	}
	push := append(append(p.push[:4:4], f32Off(in[0]), f32Off(in[1]), f32Off(in[2]), f32Off(in[3]), f32Off(stats),
		f32Off(mask), f32Off(out)), p.push[4:]...)
	return r.Dispatch(k, p.grid, words(push), attnBwdShader[at.Output], In(in[0]), In(in[1]), In(in[2]), In(in[3]),
		In(stats), In(mask), Out(out))
}

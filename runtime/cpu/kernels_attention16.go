package cpu

import "github.com/gml-dev/gml/runtime/cpu/vec"

// Attention with 16 features per head (d_model/heads in the usual small transformers:
// the bench's transformer_d128_h8) in AVX-512 assembly (package vec's
// attention16_amd64.s).
//
// The tile kernels spend most of their time around a 16-deep GEMM: packing, planning,
// transposing, and package vec calls on rows of 64 scores. Here one task is one batch
// entry (batch, head). Its keys (and for the backward its values) are transposed once
// into scratch, 16 rows of Tk floats padded to a multiple of 16, by 16×16 register
// transposes; then each call takes four query rows: a block of 16 scores of one row is
// 16 FMAs with the row's features broadcast from memory against the transposed keys
// (each 16-key row of them loaded once for the four rows), the row's softmax is exact
// rather than online since a row of Tk scores fits in scratch, and the product with v
// is one broadcast FMA per key and row. Four rows interleave the chains of maxima,
// exponentials and sums that make one row alone wait on each step. The assembly is in
// package vec (attention16_amd64.s), whose exponential (EXP16, exp_amd64.h) it shares.
//
// The backward of one entry needs no statistics pass: for four rows, vec.AttnRowsGrad16
// forms the probabilities p and ∂S = p·(gy·v - δ) and returns each row's maximum, sum
// (the log-sum-exp, written to the statistics node's output) and δ = gy·o, and
// vec.AttnKeysGrad16 walks the keys once: ∂q of the four rows, and each key's ∂k and ∂v
// loaded and stored once for the four. The key gradients of an entry accumulate in
// rows that only the entry's task writes: results depend neither on the schedule nor on
// the number of threads.
//
// In the AttentionBTHD layout one head's rows are H·16 floats apart; v and k (and ∂k|∂v)
// are copied into (out of) dense scratch rows first, since strided rows that share a few
// L1 sets evict each other on every query row.
//
// The path is taken for float32 attention with 16 features in q, k and v, no additive
// mask and 1 to attn16Keys keys (past that the keys and values leave L1 for every query
// row and the tiles do better); a non-finite score sends the entry back to the tile
// kernels, which carry the NaN and Inf rules. Keys no query sees are never read, so a
// non-finite value there does not reach the results (the tiles' products can turn it
// into NaNs by 0·Inf).
//
// On the H200 host's Xeon (BenchmarkAttention16: batch 32, 8 heads, T = 64, causal,
// (B, T, H, D); wall time) the forward takes 0.55-0.69 ms against the tiles' 1.63-1.91
// at 2 threads and 83-119 µs against 313-315 at 16; forward and backward 2.68-2.76 ms
// against 6.27-6.88 at 2 threads, 0.41-0.77 ms against 1.03-1.30 at 16. In the
// transformer bench (gml bench nn -profile, 3 rounds interleaved with main) attention
// went from 9.3 to 4.5 ms per step and its backward from 21.3 to 12.9 at 2 threads
// (PyTorch's flash attention: about 9.0 and 13.8), and from 1.60 to 0.76 and 3.67 to
// 2.52 at 16.

// attn16Keys is the most keys the 16-feature rows take: k and v transposed are then
// 40 KiB (L1d is 48 KiB on the H200 host's Xeon), and the backward's scratch fits the
// 2·attnTile² floats the trio has.
const attn16Keys = 320

// attn16 says whether the rows of attention with 16 features per head run in package
// vec's assembly: where vec runs AVX-512 (tests turn it off to compare with the tiles).
var attn16 = vec.Active() >= vec.AVX512

// small16 says whether the node runs the 16-feature rows.
func (a *attnOperands) small16() bool {
	return attn16 && a.d == 16 && a.dv == 16 && a.mask == nil && a.tk >= 1 && a.tk <= attn16Keys
}

// pad16 is n rounded up to a multiple of 16.
func pad16(n int) int { return (n + 15) &^ 15 }

// group4 is the group of four query rows from row i of entry b: r of them are there (a
// last group has fewer), n[x] is the keys row x sees (a missing row repeats the last
// one's count, so n[3] is the most, as the kernels take it), and at is row i's offset.
func (a *attnOperands) group4(b, i int) (r int, n [4]int, at int) {
	r = min(4, a.tq-i)
	for x := range n {
		n[x] = a.visibleKeys(i+min(x, r-1), 1)
	}
	return r, n, a.row(b, a.tq, i, 16)
}

// transposeKeys writes the n rows of 16 floats at src[at:], ld apart, transposed into
// kt (16 rows of np = pad16(n) floats), zeros past n; stage is 256 floats of scratch
// for a last partial block.
func transposeKeys(kt, src []float32, at, ld, n, np int, stage []float32) {
	full := n / 16
	if full > 0 {
		_, _ = src[at+(16*full-1)*ld+15], kt[16*np-1] // the assembly's bounds
		vec.AttnTranspose16(&kt[0], &src[at], ld, full, np)
	}
	if rem := n % 16; rem > 0 {
		clear(stage[:256])
		for j := range rem {
			copy(stage[j*16:(j+1)*16], src[at+(full*16+j)*ld:])
		}
		vec.AttnTranspose16(&kt[full*16], &stage[0], 16, 1, np)
	}
}

// take returns the first n floats of *s and moves *s past them.
func take(s *[]float32, n int) []float32 {
	x := (*s)[:n]
	*s = (*s)[n:]
	return x
}

// dense returns the n >= 1 rows of w (16 or 32) floats at x[at:], ld apart, as rows w
// apart: x[at:] itself where they are (the AttentionBHTD layout), else a copy in buf.
// In the AttentionBTHD layout one head's rows are H·w floats apart (512 or 1024 bytes
// in the transformer bench): the rows of an entry then fall into a few L1 sets and
// evict each other, which costs more than the copy.
func dense(x []float32, at, ld, n, w int, buf []float32) []float32 {
	if ld == w {
		return x[at:]
	}
	_, _ = x[at+(n-1)*ld+w-1], buf[n*w-1] // the assembly's bounds
	vec.AttnCopyRows(&buf[0], w, &x[at], ld, n, w)
	return buf[:n*w]
}

// stage4 copies the r < 4 rows of 16 floats at x[at:], ld apart, into dst's first 64
// floats, zeros after them, for a last group of query rows.
func stage4(dst, x []float32, at, ld, r int) []float32 {
	clear(dst[:64])
	for j := range r {
		copy(dst[16*j:16*j+16], x[at+j*ld:])
	}
	return dst[:64]
}

// entry16 computes the output rows of batch entry b, four rows per call: a last group of
// fewer rows runs from dense copies in stage, its unused rows zero queries that see as
// many keys as the group's last row (their outputs are dropped). scratch holds
// 36·pad16(tk) + 256 floats. It reports false where a score was not finite, leaving the
// rows to the tile kernels.
func (a *attnForward) entry16(scratch []float32, b int) bool {
	np := pad16(a.tk)
	kt, s, stage := take(&scratch, 16*np), take(&scratch, 4*np), take(&scratch, 256)
	k0 := a.row(b, a.tk, 0, 16)
	transposeKeys(kt, a.k, k0, a.ld(16), a.tk, np, stage)
	v := dense(a.v, k0, a.ld(16), a.tk, 16, take(&scratch, 16*a.tk))
	for i := 0; i < a.tq; i += 4 {
		r, n, at := a.group4(b, i)
		o, q, ld := a.o[at:], a.q[at:], a.ld(16)
		if r < 4 {
			o, q, ld = stage[64:128], stage4(stage, a.q, at, a.ld(16), r), 16
		}
		if !vec.AttnRowsFwd16(&o[0], &q[0], ld, &kt[0], np, &v[0], n[0], n[1], n[2], n[3], a.scale, &s[0]) {
			return false
		}
		if r < 4 {
			_ = a.o[at+(r-1)*a.ld(16)+15] // the assembly's bounds
			vec.AttnCopyRows(&a.o[at], a.ld(16), &o[0], 16, r, 16)
		}
	}
	return true
}

// entry16 computes the statistics and the three gradients of batch entry b, four query
// rows at a time: vec.AttnRowsGrad16, then vec.AttnKeysGrad16 for the four, which shares
// each key's loads and stores of ∂k and ∂v among them. A last group of fewer rows runs
// from dense copies of q, gy and o in stage, its unused rows zero (their p is then
// uniform, but ∂S, gy and q are zero, so they add nothing to ∂k and ∂v) and their dq
// going to the stage's last 16 floats. scratch holds 88·pad16(tk) + 256 floats. It reports false
// where a score was not finite, leaving everything to the tile kernels, which write
// over it.
func (t *attnTrio) entry16(scratch []float32, b int) bool {
	a := t.a
	np := pad16(a.tk)
	kt, vt := take(&scratch, 16*np), take(&scratch, 16*np)
	p, ds, stage := take(&scratch, 4*np), take(&scratch, 4*np), take(&scratch, 256)
	k0, kv0 := a.row(b, a.tk, 0, 16), a.row(b, a.tk, 0, 32)
	transposeKeys(kt, a.k, k0, a.ld(16), a.tk, np, stage)
	transposeKeys(vt, a.v, k0, a.ld(16), a.tk, np, stage)
	k := dense(a.k, k0, a.ld(16), a.tk, 16, take(&scratch, 16*a.tk))
	// ∂k|∂v accumulate in place where the rows are dense, else in scratch copied out.
	dkv := a.dkv[kv0:]
	if a.ld(32) != 32 {
		dkv = take(&scratch, 32*a.tk)
	}
	clear(dkv[:32*a.tk])
	var quad vec.AttnQuad
	for i0 := 0; i0 < a.tq; i0 += 4 {
		r, n, at := a.group4(b, i0)
		q, gy, o, ld := a.q[at:], a.gy[at:], t.o[at:], a.ld(16)
		if r < 4 {
			q, gy, o, ld = stage4(stage, a.q, at, a.ld(16), r), stage4(stage[64:], a.gy, at, a.ld(16), r), stage4(stage[128:], t.o, at, a.ld(16), r), 16
		}
		var st [12]float32 // the rows' m, l and δ
		if !vec.AttnRowsGrad16(&q[0], &gy[0], &o[0], ld, &kt[0], &vt[0], np, n[0], n[1], n[2], n[3], a.scale, &p[0], &ds[0], &st) {
			return false
		}
		for x := range 4 {
			quad.Q[x], quad.GY[x], quad.DQ[x] = &q[x*ld], &gy[x*ld], &stage[240]
			if x < r {
				row := b*a.tq + i0 + x
				a.out[2*row] = st[x] + vec.Logf(st[4+x])
				a.out[2*row+1] = st[8+x]
				quad.DQ[x] = &a.dq[at+x*a.ld(16)]
			}
		}
		vec.AttnKeysGrad16(&quad, &p[0], &ds[0], np, &k[0], 16, &dkv[0], 32, n[3], a.scale)
	}
	if a.ld(32) != 32 {
		_, _ = a.dkv[kv0+(a.tk-1)*a.ld(32)+31], dkv[32*a.tk-1] // the assembly's bounds
		vec.AttnCopyRows(&a.dkv[kv0], a.ld(32), &dkv[0], 32, a.tk, 32)
	}
	return true
}

package cpu

import "github.com/gml-dev/gml/runtime/cpu/vec"

// Attention with 16, 32 or 64 features per head (d_model/heads in the usual small
// transformers: 16 in the bench's transformer_d128_h8) in AVX-512 assembly (package
// vec's attention16_amd64.s).
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
// With 32 or 64 features the keys are transposed into d rows, a chunk of 16 features at
// a time; vec.AttnRowsFwd and vec.AttnRowsGrad sum the chunks' dot products of a block
// of scores in registers and make the outputs chunk by chunk, and vec.AttnKeysGrad16
// runs once per chunk.
//
// The backward of one entry needs no statistics pass: for four rows, vec.AttnRowsGrad16
// forms the probabilities p and ∂S = p·(gy·v - δ) and returns each row's maximum, sum
// (the log-sum-exp, written to the statistics node's output) and δ = gy·o, and
// vec.AttnKeysGrad16 walks the keys once: ∂q of the four rows, and each key's ∂k and ∂v
// loaded and stored once for the four. The key gradients of an entry accumulate in
// rows that only the entry's task writes: results depend neither on the schedule nor on
// the number of threads.
//
// In the AttentionBTHD layout one head's rows are H·d floats apart; v and k (and ∂k and ∂v)
// are copied into (out of) dense scratch rows first, since strided rows that share a few
// L1 sets evict each other on every query row.
//
// The path is taken for float32 attention with 16, 32 or 64 features in q, k and v, no
// additive mask and 1 to 16·attn16Keys/d keys (past that the keys and values leave L1
// for every query row and the tiles do better); a non-finite score sends the entry back to the tile
// kernels, which carry the NaN and Inf rules. Keys no query sees are never read, so a
// non-finite value there does not reach the results (the tiles' products can turn it
// into NaNs by 0·Inf).
//
// On the H200 host's Xeon (BenchmarkAttention16: batch 32, 8 heads, T = 64, causal,
// (B, T, H, D); wall time), with 16 features the forward takes 0.55-0.69 ms against
// the tiles' 1.63-1.91 at 2 threads and 83-119 µs against 313-315 at 16; forward and backward 2.68-2.76 ms
// against 6.27-6.88 at 2 threads, 0.41-0.77 ms against 1.03-1.30 at 16. In the
// transformer bench (gml bench nn -profile, 3 rounds interleaved with main) attention
// went from 9.3 to 4.5 ms per step and its backward from 21.3 to 12.9 at 2 threads
// (PyTorch's flash attention: about 9.0 and 13.8), and from 1.60 to 0.76 and 3.67 to
// 2.52 at 16. With 32 features (d_model 256, same shape otherwise; three rounds) the
// forward takes 0.83-0.93 ms against the tiles' 1.90-2.78 at 2 threads and 160-172 µs
// against 396-422 at 16; forward and backward 3.2-4.7 ms against 5.8-9.2, and 0.61-0.70
// against 1.22-1.39. With 64: forward 1.23-1.73 ms against 2.49-2.94 and 231-266 µs
// against 563-609; forward and backward 6.9-9.3 ms against 9.3-14.0, and 1.15-1.41
// against 1.90-2.12.

// attn16Keys is the most keys the rows take with 16 features per head (with d, 16·320/d):
// k and v transposed are then 40 KiB (L1d is 48 KiB on the H200 host's Xeon), and the
// backward's scratch fits the 2·attnTile² floats the trio has.
const attn16Keys = 320

// attn16 says whether the rows of attention with 16, 32 or 64 features per head run in
// package vec's assembly: where vec runs AVX-512 (tests turn it off to compare with the
// tiles).
var attn16 = vec.Active() >= vec.AVX512

// small16 says whether the node runs the four-row kernels: 16, 32 or 64 features in q, k
// and v (16-feature chunks), no mask, and 1 to 16·attn16Keys/d keys.
func (a *attnOperands) small16() bool {
	return attn16 && a.dv == a.d && (a.d == 16 || a.d == 32 || a.d == 64) && a.mask == nil &&
		a.tk >= 1 && a.tk <= 16*attn16Keys/a.d
}

// pad16 is n rounded up to a multiple of 16.
func pad16(n int) int { return (n + 15) &^ 15 }

// keys4 is the keys each of the four query rows from row i sees (visibleKeys), where r
// of them are there (a last group has fewer): a missing row repeats the last one's
// count, so n3 is the most, as the kernels take it. It is small enough to inline and
// returns four results rather than an array: on the H200 host's Xeon the loop around
// the kernels matters. 8f361fc's loop (an array of counts from a call) ran the
// 16-feature forward (BenchmarkAttention16's shape, 2 threads, one binary, alternating)
// at 769-903 µs against 553-735 with 2b981fd's keys4 (four visibleKeys calls) and
// 621-749 with this one, which also steps the row offset instead of dividing per group.
func (a *attnOperands) keys4(i, r int) (n0, n1, n2, n3 int) {
	if !a.causal {
		return a.tk, a.tk, a.tk, a.tk
	}
	end := i + r // past the last row; causal row x sees min(tk, x+1) keys
	return min(a.tk, i+1), min(a.tk, i+2, end), min(a.tk, i+3, end), min(a.tk, end)
}

// transposeKeys writes the n rows of d (a multiple of 16) floats at src[at:], ld apart,
// transposed into kt (d rows of np = pad16(n) floats), zeros past n; stage is 256
// floats of scratch for a last partial block.
func transposeKeys(kt, src []float32, at, ld, n, d, np int, stage []float32) {
	for c := 0; c < d; c += 16 {
		transpose16(kt[c*np:], src, at+c, ld, n, np, stage)
	}
}

// transpose16 is transposeKeys for 16 features.
func transpose16(kt, src []float32, at, ld, n, np int, stage []float32) {
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

// dense returns the n >= 1 rows of w (a multiple of 16) floats at x[at:], ld apart, as
// rows w apart: x[at:] itself where they are (the AttentionBHTD layout), else a copy in
// buf. In the AttentionBTHD layout one head's rows are H·w floats apart (512 or 1024
// bytes in the transformer bench): the rows of an entry then fall into a few L1 sets and
// evict each other, which costs more than the copy.
func dense(x []float32, at, ld, n, w int, buf []float32) []float32 {
	if ld == w {
		return x[at:]
	}
	copyRows(buf, 0, w, x, at, ld, n, w)
	return buf[:n*w]
}

// copyRows copies n rows of w (a multiple of 16) floats from src[as:], lds apart, to
// dst[ad:], ldd apart, 32 or 16 columns per assembly call.
func copyRows(dst []float32, ad, ldd int, src []float32, as, lds, n, w int) {
	_, _ = dst[ad+(n-1)*ldd+w-1], src[as+(n-1)*lds+w-1] // the assembly's bounds
	for c := 0; c < w; c += 32 {
		vec.AttnCopyRows(&dst[ad+c], ldd, &src[as+c], lds, n, min(32, w-c))
	}
}

// stage4 copies the r < 4 rows of d floats at x[at:], ld apart, into dst's first 4·d
// floats, zeros after them, for a last group of query rows.
func stage4(dst, x []float32, at, ld, d, r int) []float32 {
	clear(dst[:4*d])
	for j := range r {
		copy(dst[d*j:d*j+d], x[at+j*ld:][:d])
	}
	return dst[:4*d]
}

// entry16 computes the output rows of batch entry b, four rows per call: a last group of
// fewer rows runs from dense copies in stage, its unused rows zero queries that see as
// many keys as the group's last row (their outputs are dropped). scratch holds
// (2d+4)·pad16(tk) + 16d floats. It reports false where a score was not finite, leaving
// the rows to the tile kernels.
func (a *attnForward) entry16(scratch []float32, b int) bool {
	d, np := a.d, pad16(a.tk)
	kt, s, stage := take(&scratch, d*np), take(&scratch, 4*np), take(&scratch, 16*d)
	k0, ld := a.row(b, a.tk, 0, d), a.ld(d)
	transposeKeys(kt, a.k, k0, ld, a.tk, d, np, stage)
	v := dense(a.v, k0, ld, a.tk, d, take(&scratch, d*a.tk))
	for i, at := 0, a.row(b, a.tq, 0, d); i < a.tq; i, at = i+4, at+4*ld {
		r := min(4, a.tq-i)
		n0, n1, n2, n3 := a.keys4(i, r)
		o, q, ldq := a.o[at:], a.q[at:], ld
		if r < 4 {
			o, q, ldq = stage[4*d:8*d], stage4(stage, a.q, at, ld, d, r), d
		}
		var ok bool
		if d == 16 {
			ok = vec.AttnRowsFwd16(&o[0], &q[0], ldq, &kt[0], np, &v[0], n0, n1, n2, n3, a.scale, &s[0])
		} else {
			ok = vec.AttnRowsFwd(&o[0], &q[0], ldq, &kt[0], np, &v[0], n0, n1, n2, n3, a.scale, &s[0], d/16)
		}
		if !ok {
			return false
		}
		if r < 4 {
			copyRows(a.o, at, ld, o, 0, d, r, d)
		}
	}
	return true
}

// entry16 computes the statistics and the three gradients of batch entry b, four query
// rows at a time: vec.AttnRowsGrad16 (vec.AttnRowsGrad past 16 features), then
// vec.AttnKeysGrad16 for the four, once per chunk of 16 features, which shares each
// key's loads and stores of ∂k and ∂v among the rows. A last group of fewer rows runs
// from dense copies of q, gy and o in stage, its unused rows zero (their p is then
// uniform, but ∂S, gy and q are zero, so they add nothing to ∂k and ∂v) and their dq
// going to the stage's last d floats. ∂k|∂v accumulate in rows of [∂k, ∂v] chunk by chunk
// (16 floats each), as AttnKeysGrad16 takes them: with 16 features that is the layout of
// the AttentionGradKV node's output, so where the trio writes that and its rows are
// dense they accumulate in place, else in scratch copied out to a.kv once the entry's
// operands are read (the trio's lateKV needs that order). scratch holds (5d+8)·pad16(tk)
// + 16d floats. It reports false where a score was not finite, leaving everything to the
// tile kernels, which write over it.
func (t *attnTrio) entry16(scratch []float32, b int) bool {
	a := t.a
	d, np := a.d, pad16(a.tk)
	kt, vt := take(&scratch, d*np), take(&scratch, d*np)
	p, ds, stage := take(&scratch, 4*np), take(&scratch, 4*np), take(&scratch, 16*d)
	k0, dk0, dv0, ld := a.row(b, a.tk, 0, d), a.row(b, a.tk, 0, a.kv.wk), a.row(b, a.tk, 0, a.kv.wv), a.ld(d)
	transposeKeys(kt, a.k, k0, ld, a.tk, d, np, stage)
	transposeKeys(vt, a.v, k0, ld, a.tk, d, np, stage)
	k := dense(a.k, k0, ld, a.tk, d, take(&scratch, d*a.tk))
	inPlace := d == 16 && a.kv.joint && a.heads == 1
	dkv := a.kv.k[dk0:]
	if !inPlace {
		dkv = take(&scratch, 2*d*a.tk)
	}
	clear(dkv[:2*d*a.tk])
	var quad vec.AttnQuad
	var st [12]float32 // the rows' m, l and δ
	for i0, at := 0, a.row(b, a.tq, 0, d); i0 < a.tq; i0, at = i0+4, at+4*ld {
		r := min(4, a.tq-i0)
		n0, n1, n2, n3 := a.keys4(i0, r)
		q, gy, o, ldq := a.q[at:], a.gy[at:], t.o[at:], ld
		if r < 4 {
			q, gy, o, ldq = stage4(stage, a.q, at, ld, d, r), stage4(stage[4*d:], a.gy, at, ld, d, r), stage4(stage[8*d:], t.o, at, ld, d, r), d
		}
		var ok bool
		if d == 16 {
			ok = vec.AttnRowsGrad16(&q[0], &gy[0], &o[0], ldq, &kt[0], &vt[0], np, n0, n1, n2, n3, a.scale, &p[0], &ds[0], &st)
		} else {
			ok = vec.AttnRowsGrad(&q[0], &gy[0], &o[0], ldq, &kt[0], &vt[0], np, n0, n1, n2, n3, a.scale, &p[0], &ds[0], &st, d/16)
		}
		if !ok {
			return false
		}
		for x := range r {
			row := b*a.tq + i0 + x
			a.out[2*row] = st[x] + vec.Logf(st[4+x])
			a.out[2*row+1] = st[8+x]
		}
		for c := 0; c < d; c += 16 {
			for x := range 4 {
				quad.Q[x], quad.GY[x], quad.DQ[x] = &q[x*ldq+c], &gy[x*ldq+c], &stage[15*d+c]
				if x < r {
					quad.DQ[x] = &a.dq[at+x*ld+c]
				}
			}
			vec.AttnKeysGrad16(&quad, &p[0], &ds[0], np, &k[c], d, &dkv[2*c], 2*d, n3, a.scale)
		}
	}
	for c := 0; c < d && !inPlace; c += 16 {
		copyRows(a.kv.k, dk0+c, a.ld(a.kv.wk), dkv, 2*c, 2*d, a.tk, 16)    // ∂k
		copyRows(a.kv.v, dv0+c, a.ld(a.kv.wv), dkv, 2*c+16, 2*d, a.tk, 16) // ∂v
	}
	return true
}

package quant

import "math"

// round returns the nearest integer to v, clamped to [lo, hi].
func round(v float32, lo, hi int) int {
	q := int(math.Round(float64(v)))
	return min(max(q, lo), hi)
}

// encodeQ4_0 maps the block's value of largest magnitude to -8, so the 16 levels cover
// [-8d, 7d] with the extreme value exact. Levels are computed from the stored float16
// scale, so the decoder sees the scale the levels were chosen for.
func encodeQ4_0(dst []byte, src []float32) {
	var peak float32
	for _, v := range src {
		if abs32(v) > abs32(peak) {
			peak = v
		}
	}
	d := putF16(dst, peak/-8)
	var id float32
	if d != 0 {
		id = 1 / d
	}
	qs := dst[2:18]
	for j := range qs {
		lo := round(src[j]*id+8, 0, 15)
		hi := round(src[j+16]*id+8, 0, 15)
		qs[j] = byte(lo) | byte(hi)<<4
	}
}

// encodeQ8_0 scales the block's largest magnitude to ±127.
func encodeQ8_0(dst []byte, src []float32) {
	var amax float32
	for _, v := range src {
		amax = max(amax, abs32(v))
	}
	d := putF16(dst, amax/127)
	var id float32
	if d != 0 {
		id = 1 / d
	}
	for j, v := range src {
		dst[2+j] = byte(int8(round(v*id, -127, 127)))
	}
}

// encodeQ4_K fits each sub-block of 32 weights as s*q - m (q in 0..15, s, m >= 0), then
// quantises the eight scales and eight offsets to 6 bits against the super-block's
// largest, and chooses the final levels with those quantised values.
func encodeQ4_K(dst []byte, src []float32) {
	var scale, offset [8]float32
	var maxScale, maxOffset float32
	for j := range 8 {
		scale[j], offset[j] = fitAffine4(src[32*j : 32*j+32])
		maxScale = max(maxScale, scale[j])
		maxOffset = max(maxOffset, offset[j])
	}
	d := putF16(dst, maxScale/63)
	dmin := putF16(dst[2:], maxOffset/63)
	var ls, lm [8]byte
	for j := range 8 {
		if d > 0 {
			ls[j] = byte(round(scale[j]/d, 0, 63))
		}
		if dmin > 0 {
			lm[j] = byte(round(offset[j]/dmin, 0, 63))
		}
	}
	s := dst[4:16]
	for j := range 4 {
		s[j] = ls[j] | ls[j+4]>>4<<6
		s[j+4] = lm[j] | lm[j+4]>>4<<6
		s[j+8] = ls[j+4]&15 | lm[j+4]&15<<4
	}
	var q [QK]byte
	for j := range 8 {
		sd, md := d*float32(ls[j]), dmin*float32(lm[j])
		if sd == 0 {
			continue // every weight decodes to -md whatever its level
		}
		inv := 1 / sd
		for l := range 32 {
			q[32*j+l] = byte(round((src[32*j+l]+md)*inv, 0, 15))
		}
	}
	qs := dst[16:144]
	for g := range 4 {
		for l := range 32 {
			qs[32*g+l] = q[64*g+l] | q[64*g+32+l]<<4
		}
	}
}

// fitAffine4 returns s and m >= 0 such that s*q - m, q in 0..15, approximates x in a
// weighted least-squares sense. The range [min(x, 0), max(x)] is tried with grids a
// little finer and coarser than 15 steps; for each grid's levels the best s and offset
// follow in closed form, and the pair with the least error wins. Weights |x| + rms(x)
// favour the large values, whose errors dominate a product.
func fitAffine4(x []float32) (s, m float32) {
	lo, hi := float32(0), x[0]
	var sq float32
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
		sq += v * v
	}
	if hi <= lo {
		return 0, -lo
	}
	rms := float32(math.Sqrt(float64(sq / float32(len(x)))))
	var w [32]float32
	var sw, swx float32
	for i, v := range x {
		w[i] = abs32(v) + rms
		sw += w[i]
		swx += w[i] * v
	}
	bestS, bestB := (hi-lo)/15, lo
	bestErr := affineError(x, w[:], bestS, bestB, 1/bestS, lo)
	for t := -10; t <= 10; t++ {
		inv := (15 + 0.1*float32(t)) / (hi - lo)
		// Levels for this grid, then the weighted least-squares s and b of x ≈ s*q + b.
		var swq, swq2, swxq float32
		for i, v := range x {
			q := float32(round((v-lo)*inv, 0, 15))
			swq += w[i] * q
			swq2 += w[i] * q * q
			swxq += w[i] * v * q
		}
		det := sw*swq2 - swq*swq
		if det <= 0 {
			continue
		}
		cs := (sw*swxq - swq*swx) / det
		cb := (swq2*swx - swq*swxq) / det
		if cb > 0 { // the format's offset only subtracts
			cb, cs = 0, swxq/swq2
		}
		if cs <= 0 {
			continue
		}
		if e := affineError(x, w[:], cs, cb, inv, lo); e < bestErr {
			bestErr, bestS, bestB = e, cs, cb
		}
	}
	return bestS, -bestB
}

// affineError is the weighted squared error of x against s*q + b with the levels q the
// grid (inv, lo) gives.
func affineError(x, w []float32, s, b, inv, lo float32) float32 {
	var e float32
	for i, v := range x {
		q := float32(round((v-lo)*inv, 0, 15))
		r := s*q + b - v
		e += w[i] * r * r
	}
	return e
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

package vec

// DropoutVectors draws tensor.DropoutDraw's mask over whole vectors from the start of d:
// element j is kept when hash(base+j+seedHash)>>8 >= threshold (the PCG hash of
// tensor.DropoutDraw.Keep, whose Params give seedHash and threshold), and then d[j] =
// x[j]·scale, or scale when x is nil (the mask itself); a dropped element is +0. It
// returns how many elements it did, 0 at the Go level: the caller draws the rest with
// Keep, so the hash has one Go definition and this assembly, tested to agree.
func DropoutVectors(d, x []float32, base, seedHash, threshold uint32, scale float32) int {
	if x != nil {
		d = d[:len(x)]
	}
	return dropoutAsm(active.level, d, x, base, seedHash, threshold, scale)
}

// Index reading, bad-index reporting and element addition shared by index.comp and
// index_add.comp. The including shader declares IDX64 (I64 indices), NUM (the added
// type), the index buffer ix (uint[]), the device's error word errs (uint[], see
// gpu/recorder.go) and a push block p with offI and tag.

// rawIndex returns idx[j]; ok is false for an I64 value outside the int32 range.
int rawIndex(uint j, out bool ok) {
	ok = true;
	if (!IDX64) return int(ix[p.offI + j]);
	int v = int(ix[p.offI + 2u * j]);
	ok = ix[p.offI + 2u * j + 1u] == (v < 0 ? 0xffffffffu : 0u);
	return v;
}

// reportIndex reports idx[j] as out of range: the first report of the submission swaps
// its tag into errs[0] and writes the index's 64-bit value to errs[1..2]; later ones
// change nothing.
void reportIndex(uint j) {
	if (atomicCompSwap(errs[0], 0u, p.tag) != 0u) return;
	uint lo = ix[p.offI + (IDX64 ? 2u * j : j)];
	errs[1] = lo;
	errs[2] = IDX64 ? ix[p.offI + 2u * j + 1u] : (int(lo) < 0 ? 0xffffffffu : 0u);
}

// index returns idx[j] resolved against an axis of size dim; one outside [-dim, dim) is
// reported and gives -1.
int index(uint j, uint dim) {
	bool ok;
	int v = rawIndex(j, ok);
	if (ok && v < 0) v += int(dim);
	if (ok && v >= 0 && v < int(dim)) return v;
	reportIndex(j);
	return -1;
}

// add adds two elements of the type NUM selects (0 f32, 1 i32, 2 i64).
uvec2 add(uvec2 s, uvec2 t) {
	if (NUM == 0u) return uvec2(floatBitsToUint(uintBitsToFloat(s.x) + uintBitsToFloat(t.x)), 0u);
	if (NUM == 1u) return uvec2(s.x + t.x, 0u);
	uint carry;
	uint lo = uaddCarry(s.x, t.x, carry);
	return uvec2(lo, s.y + t.y + carry);
}

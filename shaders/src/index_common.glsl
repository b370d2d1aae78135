// Index reading and element addition shared by index.comp and index_add.comp. The
// including shader declares IDX64 (I64 indices), NUM (the added type), the index
// buffer ix (uint[]) and a push block p with offI.

// rawIndex returns idx[j]; ok is false for an I64 value outside the int32 range.
int rawIndex(uint j, out bool ok) {
	ok = true;
	if (!IDX64) return int(ix[p.offI + j]);
	int v = int(ix[p.offI + 2u * j]);
	ok = ix[p.offI + 2u * j + 1u] == (v < 0 ? 0xffffffffu : 0u);
	return v;
}

// index returns idx[j] resolved against an axis of size dim, or -1 when it lies outside.
int index(uint j, uint dim) {
	bool ok;
	int v = rawIndex(j, ok);
	if (!ok) return -1;
	if (v < 0) v += int(dim);
	return v >= 0 && v < int(dim) ? v : -1;
}

// add adds two elements of the type NUM selects (0 f32, 1 i32, 2 i64).
uvec2 add(uvec2 s, uvec2 t) {
	if (NUM == 0u) return uvec2(floatBitsToUint(uintBitsToFloat(s.x) + uintBitsToFloat(t.x)), 0u);
	if (NUM == 1u) return uvec2(s.x + t.x, 0u);
	uint carry;
	uint lo = uaddCarry(s.x, t.x, carry);
	return uvec2(lo, s.y + t.y + carry);
}

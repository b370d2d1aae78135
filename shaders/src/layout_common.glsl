// Typed element access over uint[] storage buffers, shared by the layout, index, cast
// and compare shaders. Every buffer is bound as 32-bit words, so no 8- or 16-bit storage
// feature is needed: a Bool is one byte, F16/BF16 two, I64 two words. An element's bits
// travel as a uvec2 (low word, high word; the high word is 0 below 8 bytes).
//
// Stores are made per "unit": one 32-bit word holding 4/ESIZE elements for 1- and 2-byte
// types, one element otherwise. Each invocation owns whole units, so neighbouring
// elements never race. The including shader declares ESIZE (output element bytes), the
// output buffer `o` (uint[], not writeonly), a push block p with fields units, u0, n and
// offO, and defines `uvec2 elem(uint i, inout bool keep)`; keep = true leaves element i
// as it was. The allocator rounds buffers to 256 bytes, so a unit that runs past the
// tensor's last element stays inside its buffer (those elements keep their bits).

// LOADN reads element i of size sz bytes from buffer buf whose data starts at word off.
#define LOADN(buf, off, i, sz) ((sz) == 8u ? uvec2(buf[(off) + 2u * (i)], buf[(off) + 2u * (i) + 1u]) : \
	(sz) == 4u ? uvec2(buf[(off) + (i)], 0u) : \
	(sz) == 2u ? uvec2((buf[(off) + (i) / 2u] >> (16u * ((i) & 1u))) & 0xffffu, 0u) : \
	uvec2((buf[(off) + (i) / 4u] >> (8u * ((i) & 3u))) & 0xffu, 0u))

uvec2 elem(uint i, inout bool keep);

// storeUnits writes units [u0, u0+units) of the output in a grid-stride loop.
void storeUnits() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint k = gl_GlobalInvocationID.x; k < p.units; k += stride) {
		uint u = p.u0 + k;
		if (ESIZE >= 4u) {
			bool keep = false;
			uvec2 v = elem(u, keep);
			if (keep) continue;
			if (ESIZE == 8u) {
				o[p.offO + 2u * u] = v.x;
				o[p.offO + 2u * u + 1u] = v.y;
			} else {
				o[p.offO + u] = v.x;
			}
			continue;
		}
		uint per = 4u / ESIZE, bits = 8u * ESIZE, mask = (1u << bits) - 1u;
		uint w = 0u;
		bool readOld = false;
		uint old = 0u;
		for (uint j = 0u; j < per; j++) {
			uint i = u * per + j;
			bool keep = i >= p.n;
			uint v = 0u;
			if (!keep) v = elem(i, keep).x & mask;
			if (keep) {
				if (!readOld) {
					old = o[p.offO + u];
					readOld = true;
				}
				v = (old >> (bits * j)) & mask;
			}
			w |= v << (bits * j);
		}
		o[p.offO + u] = w;
	}
}

// Element conversions written with integer operations, so that every device rounds
// exactly as gml's Go code does (tensor.Float32ToF16, Float32ToBF16, Go's int64 to
// float32 conversion). DType codes are tensor.DType's: 0 F32, 1 F16, 2 BF16, 3 I32,
// 4 I64, 5 Bool.

uint dtypeSize(uint t) { return t == 4u ? 8u : (t == 1u || t == 2u) ? 2u : t == 5u ? 1u : 4u; }

float f16ToFloat(uint h) {
	uint sign = (h & 0x8000u) << 16;
	uint e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1fu) return uintBitsToFloat(sign | 0x7f800000u | (m << 13));
	if (e == 0u) return uintBitsToFloat(sign | floatBitsToUint(float(m) * (1.0 / 16777216.0)));
	return uintBitsToFloat(sign | ((e + 112u) << 23) | (m << 13));
}

uint floatToF16(float f) {
	uint b = floatBitsToUint(f);
	uint sign = (b >> 16) & 0x8000u, man = b & 0x7fffffu;
	int e = int((b >> 23) & 0xffu);
	if (e == 255) return sign | (man != 0u ? 0x7e00u : 0x7c00u);
	if (e > 142) return sign | 0x7c00u;
	if (e >= 113) {
		uint h = sign | (uint(e - 112) << 10) | (man >> 13);
		uint rest = man & 0x1fffu;
		if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) h++;
		return h;
	}
	if (e >= 102) {
		uint m = man | 0x800000u, shift = uint(126 - e);
		uint h = m >> shift, rest = m & ((1u << shift) - 1u), half_ = 1u << (shift - 1u);
		if (rest > half_ || (rest == half_ && (h & 1u) == 1u)) h++;
		return sign | h;
	}
	return sign;
}

uint floatToBF16(float f) {
	uint b = floatBitsToUint(f);
	if ((b & 0x7fffffffu) > 0x7f800000u) return (b >> 16) | 0x40u;
	b += 0x7fffu + ((b >> 16) & 1u);
	return b >> 16;
}

uvec2 shr64(uvec2 v, int s) {
	if (s <= 0) return v;
	if (s >= 32) return uvec2(v.y >> (s - 32), 0u);
	return uvec2((v.x >> s) | (v.y << (32 - s)), v.y >> s);
}

uvec2 shl64(uvec2 v, int s) {
	if (s <= 0) return v;
	if (s >= 32) return uvec2(0u, v.x << (s - 32));
	return uvec2(v.x << s, (v.y << s) | (v.x >> (32 - s)));
}

// i64ToFloat rounds a two's-complement int64 (low, high words) to the nearest float,
// ties to even.
float i64ToFloat(uvec2 v) {
	bool neg = (v.y & 0x80000000u) != 0u;
	if (neg) {
		uint c;
		v.x = uaddCarry(~v.x, 1u, c);
		v.y = ~v.y + c;
	}
	float f;
	if (v.y == 0u && v.x < 16777216u) {
		f = float(v.x);
	} else {
		int shift = (v.y != 0u ? 32 + findMSB(v.y) : findMSB(v.x)) - 23;
		uvec2 r = shr64(v, shift - 1);
		uint m = r.x >> 1;
		bool sticky = shl64(r, shift - 1) != v;
		if ((r.x & 1u) != 0u && (sticky || (m & 1u) != 0u)) m++;
		f = ldexp(float(m), shift);
	}
	return neg ? -f : f;
}

// floatToI64 truncates toward zero (for values inside the int64 range).
uvec2 floatToI64(float f) {
	float t = trunc(f);
	if (abs(t) < 2147483648.0) {
		int i = int(t);
		return uvec2(uint(i), i < 0 ? 0xffffffffu : 0u);
	}
	float hi = floor(t * (1.0 / 4294967296.0));
	return uvec2(uint(t - hi * 4294967296.0), uint(int(hi)));
}

// asFloat widens a float-typed element (F32, F16, BF16) to float.
float asFloat(uvec2 v, uint t) {
	if (t == 1u) return f16ToFloat(v.x);
	if (t == 2u) return uintBitsToFloat(v.x << 16);
	return uintBitsToFloat(v.x);
}

// toI64 widens an integer or Bool element to int64 words.
uvec2 toI64(uvec2 v, uint t) {
	if (t == 3u) return uvec2(v.x, int(v.x) < 0 ? 0xffffffffu : 0u);
	if (t == 5u) return uvec2(v.x, 0u);
	return v;
}

bool isFloatType(uint t) { return t <= 2u; }

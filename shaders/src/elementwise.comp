#version 450
// Elementwise unary and binary ops with NumPy broadcasting: c[i] = f(a[ia], b[ib]).
// OP selects the function (opcodes.glsl, generated from tensor's op table: COPY is the
// identity of the layout copies, GELU_TANH Gelu's tanh form); the output's shape is given
// collapsed to at most six axes with each input's element strides per axis (0 where it
// broadcasts). CONTIG skips the index arithmetic when both inputs are dense and
// unbroadcast; otherwise only the last AXES slots are walked, and the outermost of them
// needs no division (integer division dominated broadcast ops). A grid-stride loop
// covers any size.
#extension GL_EXT_control_flow_attributes : require

#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const bool CONTIG = false;
layout(constant_id = 3) const uint AXES = 6;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint n;
	uint offA, offB, offC;
	float p0, p1;
	uint dims[6];
	uint sa[6];
	uint sb[6];
} p;

const bool BINARY = OP >= ELEMENTWISE_BINARY_FIRST && OP <= ELEMENTWISE_BINARY_LAST;

const float SQRT_2_OVER_PI = 0.7978845608;

// erf by Abramowitz and Stegun 7.1.26 refined: |error| < 1.2e-7.
float erf_(float x) {
	float t = 1.0 / (1.0 + 0.5 * abs(x));
	float y = 1.0 - t * exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
		t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
	return x >= 0.0 ? y : -y;
}

float sigmoid_(float x) { return 1.0 / (1.0 + exp(-x)); }

// pow_ is C's pow: GLSL's is undefined for a negative base (it computes exp2(y*log2(x))),
// but an integral exponent of one is well defined, and 0^y is 0 for y > 0, 1 for y = 0.
float pow_(float x, float y) {
	if (x > 0.0) {
		return pow(x, y);
	}
	if (x == 0.0) {
		return y > 0.0 ? 0.0 : (y == 0.0 ? 1.0 : 1.0 / 0.0);
	}
	if (y != floor(y)) {
		return 0.0 / 0.0;
	}
	float r = pow(-x, y);
	return mod(y, 2.0) == 1.0 ? -r : r;
}

// softplus_ is max(x, 0) + log(1 + exp(-|x|)), with log1p's series for tiny arguments.
float softplus_(float x) {
	float y = exp(-abs(x));
	float l = y < 1e-4 ? y * (1.0 - 0.5 * y) : log(1.0 + y);
	return max(x, 0.0) + l;
}

float unary(float x) {
	switch (OP) {
	case ELEMENTWISE_COPY: return x;
	case ELEMENTWISE_NEG: return -x;
	case ELEMENTWISE_ABS: return abs(x);
	case ELEMENTWISE_SIGN: return sign(x);
	case ELEMENTWISE_EXP: return exp(x);
	case ELEMENTWISE_LOG: return log(x);
	case ELEMENTWISE_SQRT: return sqrt(x);
	case ELEMENTWISE_RSQRT: return inversesqrt(x);
	case ELEMENTWISE_SQUARE: return x * x;
	case ELEMENTWISE_SIN: return sin(x);
	case ELEMENTWISE_COS: return cos(x);
	case ELEMENTWISE_TANH: return tanh(clamp(x, -15.0, 15.0));
	case ELEMENTWISE_SIGMOID: return sigmoid_(x);
	case ELEMENTWISE_RELU: return max(x, 0.0);
	case ELEMENTWISE_LEAKY_RELU: return x >= 0.0 ? x : p.p0 * x;
	case ELEMENTWISE_ELU: return x >= 0.0 ? x : p.p0 * (exp(x) - 1.0);
	case ELEMENTWISE_GELU: return 0.5 * x * (1.0 + erf_(x * 0.70710678118));
	case ELEMENTWISE_GELU_TANH: return 0.5 * x * (1.0 + tanh(clamp(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x), -15.0, 15.0)));
	case ELEMENTWISE_SILU: return x * sigmoid_(x);
	case ELEMENTWISE_SOFTPLUS: return softplus_(x);
	case ELEMENTWISE_SOFTSIGN: return x / (1.0 + abs(x));
	case ELEMENTWISE_HARDSIGMOID: return clamp(p.p0 * x + p.p1, 0.0, 1.0);
	case ELEMENTWISE_HARDSWISH: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
	case ELEMENTWISE_ERF: return erf_(x);
	case ELEMENTWISE_FLOOR: return floor(x);
	case ELEMENTWISE_CEIL: return ceil(x);
	case ELEMENTWISE_ROUND: return roundEven(x);
	case ELEMENTWISE_TAN: return tan(x);
	case ELEMENTWISE_ATAN: return atan(x);
	case ELEMENTWISE_SINH: return sinh(x);
	case ELEMENTWISE_COSH: return cosh(x);
	// Through the two-argument arctangent: GLSL's asin and acos are far less precise
	// on some drivers (3e-4 on lavapipe).
	case ELEMENTWISE_ASIN: return atan(x, sqrt((1.0 - x) * (1.0 + x)));
	case ELEMENTWISE_ACOS: return atan(sqrt((1.0 - x) * (1.0 + x)), x);
	case ELEMENTWISE_ASINH: return asinh(x);
	case ELEMENTWISE_ACOSH: return acosh(x);
	case ELEMENTWISE_ATANH: return atanh(x);
	case ELEMENTWISE_CLAMP: return min(max(x, p.p0), p.p1);
	case ELEMENTWISE_SCALE: return x * p.p0 + p.p1;
	}
	return x;
}

float binary(float x, float y) {
	switch (OP) {
	case ELEMENTWISE_ADD: return x + y;
	case ELEMENTWISE_SUB: return x - y;
	case ELEMENTWISE_MUL: return x * y;
	case ELEMENTWISE_DIV: return x / y;
	case ELEMENTWISE_POW: return pow_(x, y);
	case ELEMENTWISE_MOD: return x - y * trunc(x / y);
	case ELEMENTWISE_MAXIMUM: return max(x, y);
	case ELEMENTWISE_MINIMUM: return min(x, y);
	}
	return x;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		uint ia = i, ib = i;
		if (!CONTIG) {
			uint rest = i;
			ia = 0;
			ib = 0;
			[[unroll]] for (int d = 5; d >= 0; d--) {
				// No break: a loop with an early exit is not unrolled.
				if (d >= 6 - int(AXES)) {
					uint coord = rest; // the outermost axis: rest < dims[d]
					if (d > 6 - int(AXES)) {
						uint q = rest / p.dims[d];
						coord = rest - q * p.dims[d];
						rest = q;
					}
					ia += coord * p.sa[d];
					ib += coord * p.sb[d];
				}
			}
		}
		float x = a[p.offA + ia];
		c[p.offC + i] = BINARY ? binary(x, b[p.offB + ib]) : unary(x);
	}
}

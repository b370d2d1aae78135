#version 450
// Optimizer updates in place, one element per thread (grid-stride). ADAM false: SGD with
// momentum (velocity in m), weight decay and optional Nesterov; ADAM true: Adam or AdamW
// (DECOUPLED) with bias corrections. lr and step are read from one-element buffers, so a
// schedule can change them between runs of the same recording.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool ADAM = false;
layout(constant_id = 2) const bool NESTEROV = false;
layout(constant_id = 3) const bool DECOUPLED = false;

layout(set = 0, binding = 0) buffer P { float prm[]; };
layout(set = 0, binding = 1) readonly buffer Gr { float grad[]; };
layout(set = 0, binding = 2) buffer M { float m[]; };
layout(set = 0, binding = 3) buffer V { float v[]; };
layout(set = 0, binding = 4) readonly buffer LR { float lrBuf[]; };
layout(set = 0, binding = 5) readonly buffer ST { float stepBuf[]; };

layout(push_constant) uniform Push {
	uint n;
	uint offP, offG, offM, offV, offLR, offStep;
	float b1, b2, eps, wd, mu;
	float lnb1, lnb2; // log(b1), log(b2) computed on the host in float64
} p;

// oneMinusPow returns 1 - b^t = -expm1(t*log b) without cancellation for small t*log b.
float oneMinusPow(float lnb, float t) {
	float z = t * lnb;
	if (abs(z) < 0.1) return -z * (1.0 + z / 2.0 * (1.0 + z / 3.0 * (1.0 + z / 4.0 * (1.0 + z / 5.0))));
	return 1.0 - exp(z);
}

void main() {
	float lr = lrBuf[p.offLR];
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	if (!ADAM) {
		for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
			float pi = prm[p.offP + i];
			float gi = grad[p.offG + i] + p.wd * pi;
			float vel = p.mu * m[p.offM + i] + gi;
			m[p.offM + i] = vel;
			if (NESTEROV) vel = gi + p.mu * vel;
			prm[p.offP + i] = pi - lr * vel;
		}
		return;
	}
	float t = stepBuf[p.offStep];
	float c1 = 1.0 / oneMinusPow(p.lnb1, t);
	float c2 = 1.0 / oneMinusPow(p.lnb2, t);
	float decay = DECOUPLED ? 1.0 - lr * p.wd : 1.0;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		float pi = prm[p.offP + i];
		float gi = grad[p.offG + i];
		if (!DECOUPLED) gi += p.wd * pi;
		float mi = p.b1 * m[p.offM + i] + (1.0 - p.b1) * gi;
		float vi = p.b2 * v[p.offV + i] + (1.0 - p.b2) * gi * gi;
		m[p.offM + i] = mi;
		v[p.offV + i] = vi;
		prm[p.offP + i] = pi * decay - lr * (mi * c1) / (sqrt(vi * c2) + p.eps);
	}
}

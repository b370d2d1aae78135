#version 450
// Mamba's causal depthwise convolution over time (tensor/ops_ssm.go): y[b,t,c] =
// Σ_j w[c,j]·xp[b,t+j,c] with xp = [state; x] along time.
//
// MODE 0: forward, one invocation per output element.
// MODE 1: the gradient of xp (of the state, then of x), one invocation per element:
//         Σ_j w[c,j]·gy[b,τ−j,c] over the taps that reach a token.
// MODE 2: the gradient of w, one invocation per tap: Σ_{b,t} gy[b,t,c]·xp[b,t+j,c].
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer W { float w[]; };
layout(set = 0, binding = 2) readonly buffer S { float s[]; };
layout(set = 0, binding = 3) readonly buffer GY { float gy[]; };
layout(set = 0, binding = 4) buffer O { float o[]; };

layout(push_constant) uniform Push {
	uint B, T, D, K;
	uint offX, offW, offS, offGY, offO;
} p;

float xp(uint b, uint tau, uint c) {
	if (tau < p.K - 1u) return s[p.offS + (b * (p.K - 1u) + tau) * p.D + c];
	return x[p.offX + (b * p.T + tau - (p.K - 1u)) * p.D + c];
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint span = p.T + p.K - 1u;
	if (MODE == 0u) {
		for (uint q = gl_GlobalInvocationID.x; q < p.B * p.T * p.D; q += stride) {
			uint c = q % p.D, t = (q / p.D) % p.T, b = q / (p.D * p.T);
			float sum = 0.0;
			for (uint j = 0u; j < p.K; j++) sum += w[p.offW + c * p.K + j] * xp(b, t + j, c);
			o[p.offO + q] = sum;
		}
	} else if (MODE == 1u) {
		// Gradients: x (B·T·D), w (D·K), state (B·(K−1)·D).
		uint gw = p.offO + p.B * p.T * p.D, gs = gw + p.D * p.K;
		for (uint q = gl_GlobalInvocationID.x; q < p.B * span * p.D; q += stride) {
			uint c = q % p.D, tau = (q / p.D) % span, b = q / (p.D * span);
			float sum = 0.0;
			for (uint j = 0u; j < p.K; j++) {
				if (tau >= j && tau - j < p.T) sum += w[p.offW + c * p.K + j] * gy[p.offGY + (b * p.T + tau - j) * p.D + c];
			}
			if (tau < p.K - 1u) o[gs + (b * (p.K - 1u) + tau) * p.D + c] = sum;
			else o[p.offO + (b * p.T + tau - (p.K - 1u)) * p.D + c] = sum;
		}
	} else {
		uint gw = p.offO + p.B * p.T * p.D;
		for (uint q = gl_GlobalInvocationID.x; q < p.D * p.K; q += stride) {
			uint c = q / p.K, j = q % p.K;
			float sum = 0.0;
			for (uint b = 0u; b < p.B; b++) {
				for (uint t = 0u; t < p.T; t++) sum += gy[p.offGY + (b * p.T + t) * p.D + c] * xp(b, t + j, c);
			}
			o[gw + q] = sum;
		}
	}
}

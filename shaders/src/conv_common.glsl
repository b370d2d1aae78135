// Geometry shared by the convolution shaders: a 2-D convolution (1-D has H = KH = 1) of
// an NCHW input X (N, C, H, W) by OIHW weights (O, C/G, KH, KW) giving Y (N, O, OH, OW).
// The host fills the same layout (gpu.convPush). Offsets count floats.
layout(push_constant) uniform Push {
	uint N, C, H, W;
	uint O, KH, KW, OH, OW;
	uint SH, SW, PT, PL, DH, DW;
	uint G;
	uint offA, offB, offC;
} p;

// im2col returns the input value that kernel tap t (row-major over KH×KW) of channel
// chan (absolute) sees at output position pix (row-major over OH×OW) of image n, or 0
// where the window covers padding.
float im2col(uint n, uint chan, uint t, uint pix) {
	uint ky = t / p.KW, kx = t % p.KW;
	uint oy = pix / p.OW, ox = pix % p.OW;
	int iy = int(oy * p.SH + ky * p.DH) - int(p.PT);
	int ix = int(ox * p.SW + kx * p.DW) - int(p.PL);
	if (iy < 0 || ix < 0 || iy >= int(p.H) || ix >= int(p.W)) return 0.0;
	return X[((n * p.C + chan) * p.H + uint(iy)) * p.W + uint(ix) + XOFF];
}

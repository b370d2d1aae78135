//go:build !amd64

package vec

// Without assembly Active() is never AVX512, so runtime/cpu never calls these; a caller
// that does gets a panic that says so rather than rows left unwritten.

const errNoAttnRows = "vec: the attention row kernels are AVX-512 assembly, absent on this architecture (call them only where Active() is AVX512)"

func AttnTranspose16(dst, src *float32, ld, blocks, np int) { panic(errNoAttnRows) }

func AttnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int) { panic(errNoAttnRows) }

func AttnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool {
	panic(errNoAttnRows)
}

func AttnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool {
	panic(errNoAttnRows)
}

func AttnKeysGrad16(rows *AttnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32) {
	panic(errNoAttnRows)
}

func AttnRowsFwd(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32, chunks int) bool {
	panic(errNoAttnRows)
}

func AttnRowsGrad(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32, chunks int) bool {
	panic(errNoAttnRows)
}

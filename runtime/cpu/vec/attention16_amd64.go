//go:build amd64

package vec

// The rows of attention with 16 features per head (and 16·chunks) in AVX-512 (attention16_amd64.s), for
// runtime/cpu's kernels_attention16.go, which checks the bounds and calls them only
// where Active() is AVX512. The contracts are in the assembly's comments.

// AttnTranspose16 writes blocks of 16 rows of 16 floats at src (ld floats apart)
// transposed into dst, 16 rows of np floats.
//
//go:noescape
func AttnTranspose16(dst, src *float32, ld, blocks, np int)

// AttnCopyRows copies rows rows of w floats (16 or 32) from src, lds floats apart, to
// dst, ldd apart.
//
//go:noescape
func AttnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int)

// AttnRowsFwd16 computes the attention outputs of four query rows; it reports false
// where a score is not finite.
//
//go:noescape
func AttnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

// AttnRowsGrad16 computes the first half of the fused backward of four query rows: the
// probabilities, ∂S and each row's maximum, sum and δ; it reports false where a score
// is not finite.
//
//go:noescape
func AttnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool

// AttnKeysGrad16 computes the second half of the fused backward of four query rows: their
// ∂q and their shares of every key's ∂k and ∂v.
//
//go:noescape
func AttnKeysGrad16(rows *AttnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32)

// AttnRowsFwd is AttnRowsFwd16 for rows of 16·chunks features.
//
//go:noescape
func AttnRowsFwd(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32, chunks int) bool

// AttnRowsGrad is AttnRowsGrad16 for rows of 16·chunks features.
//
//go:noescape
func AttnRowsGrad(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32, chunks int) bool

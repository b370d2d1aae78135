//go:build amd64

package cpu

import "github.com/gml-dev/gml/runtime/cpu/vec"

// The assembly of kernels_attention_amd64.s (see kernels_attention16.go).

//go:noescape
func attnTranspose16(dst, src *float32, ld, blocks, np int)

//go:noescape
func attnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int)

//go:noescape
func attnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func attnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool

//go:noescape
func attnKeysGrad16(rows *attnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32)

// attn16 says whether the rows of attention with 16 features per head run in
// kernels_attention_amd64.s: where package vec runs AVX-512.
var attn16 = vec.Active() >= vec.AVX512

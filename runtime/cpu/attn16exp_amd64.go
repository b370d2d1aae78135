//go:build amd64

package cpu

import (
	"os"
	"unsafe"

	"github.com/gml-dev/gml/runtime/cpu/vec"
)

// Experiment (attn3): which kernels the 16-feature rows run, by GML_ATTN16V.

//go:noescape
func attnTranspose16(dst, src *float32, ld, blocks, np int)

//go:noescape
func attnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int)

//go:noescape
func attnRowFwd16(o, q, kt *float32, np int, v *float32, ldv, n int, scale float32, s *float32) bool

//go:noescape
func attnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func attnRowGrad16(q, gy, o, kt, vt *float32, np, n, nb int, scale float32, s, ds *float32) (m, l, delta float32, ok bool)

//go:noescape
func attnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool

//go:noescape
func attnKeysGrad16(rows *attnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32)

type attnQuad struct{ q, gy, dq [4]*float32 }

var (
	fwd16   = vec.AttnRowsFwd16
	grad16  = vec.AttnRowsGrad16
	keys16  = vec.AttnKeysGrad16
	variant = os.Getenv("GML_ATTN16V")
)

func init() {
	switch variant {
	case "", "S":
	case "M":
		fwd16, grad16 = attnRowsFwd16, attnRowsGrad16
		keys16 = func(rows *vec.AttnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32) {
			attnKeysGrad16((*attnQuad)(unsafe.Pointer(rows)), p, ds, np, k, ldk, dkv, lddkv, n, scale)
		}
	case "S0":
		fwd16 = vec.AttnRowsFwd16S0
	case "S32":
		fwd16 = vec.AttnRowsFwd16S32
	case "SL":
		fwd16 = vec.AttnRowsFwd16SL
	case "C0":
		fwd16, grad16 = vec.AttnRowsFwd16C0, vec.AttnRowsGrad16C0
	case "C32":
		fwd16 = vec.AttnRowsFwd16C32
	case "CN":
		fwd16, grad16 = vec.AttnRowsFwd16CN, vec.AttnRowsGrad16CN
	default:
		panic("GML_ATTN16V: " + variant)
	}
}

//go:build amd64

package vec

// Experiment (attn3): the forward and rows-grad kernels at chosen alignments and with
// the compact constant table of main's kernels_attention_amd64.s.

//go:noescape
func AttnRowsFwd16S0(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsFwd16S32(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsFwd16SL(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsFwd16C0(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsFwd16C32(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsFwd16CN(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool

//go:noescape
func AttnRowsGrad16C0(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool

//go:noescape
func AttnRowsGrad16CN(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool

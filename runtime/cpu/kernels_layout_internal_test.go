package cpu

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// BenchmarkLayoutCopy times the copies of the transformer benchmark's attention
// (d128, 8 heads of 16, 64 tokens, batch 32): the heads split and merge permutes and
// the slices of ∂k and ∂v out of the fused key/value gradient, 1 MiB each, beside a
// contiguous copy of 1 MiB. Bytes are those written.
func BenchmarkLayoutCopy(b *testing.B) {
	cases := []struct {
		name    string
		shape   tensor.Shape
		strides []int
		base    int
		in      int
	}{
		{"split", tensor.Shape{32, 8, 64, 16}, []int{8192, 16, 128, 1}, 0, 32 * 64 * 128},
		{"merge", tensor.Shape{32, 64, 8, 16}, []int{8192, 16, 1024, 1}, 0, 32 * 64 * 128},
		{"contiguous", tensor.Shape{32 * 64 * 128}, []int{1}, 0, 32 * 64 * 128}, // the ceiling
		{"slice_dv", tensor.Shape{32, 8, 64, 16}, []int{16384, 2048, 32, 1}, 16, 32 * 64 * 256},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dst, src := alignedBytes(c.shape.Size()*4), alignedBytes(c.in*4)
			run, err := stridedCopy(4, c.shape, c.strides, c.base, dst, src)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				_ = run()
			}
		})
	}
}

// refStridedCopy is stridedCopy's definition, one element at a time.
func refStridedCopy(esz int, shape tensor.Shape, strides []int, base int, dst, src []byte) {
	idx := make([]int, len(shape))
	for i := range shape.Size() {
		off := base
		for k := range shape {
			off += idx[k] * strides[k]
		}
		copy(dst[i*esz:(i+1)*esz], src[off*esz:(off+1)*esz])
		for k := len(shape) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
}

// permutations lists every ordering of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for at := 0; at <= len(p); at++ {
			q := append(append(append([]int{}, p[:at]...), n-1), p[at:]...)
			out = append(out, q)
		}
	}
	return out
}

// checkCopy runs stridedCopy on a patterned source and compares it with the reference.
func checkCopy(t *testing.T, name string, esz int, shape tensor.Shape, st []int, base, srcLen int) {
	t.Helper()
	src := alignedBytes(srcLen * esz)
	for i := range src {
		src[i] = byte(i*7 + i/251)
	}
	got, want := alignedBytes(shape.Size()*esz), make([]byte, shape.Size()*esz)
	run, err := stridedCopy(esz, shape, st, base, got, src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := run(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	refStridedCopy(esz, shape, st, base, want, src)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: the copy differs from the reference", name)
	}
}

// TestStridedCopyPaths checks every permutation of ragged rank-3 and rank-4 shapes, with
// innermost axes of 1, 3, 16 and 17 elements, for every element size, against the
// reference: the block moves (runs of 2 to 64 bytes), the folded pieces, the tiled
// transposes, the plain walk, and, above copyGrain, their split between goroutines.
func TestStridedCopyPaths(t *testing.T) {
	dims := []int{1, 7, 33, 257}
	var shapes []tensor.Shape
	for _, inner := range []int{1, 3, 16, 17} {
		for _, a := range dims {
			for _, b := range dims {
				if a*b <= 257*33 {
					shapes = append(shapes, tensor.Shape{a, b, inner})
				}
				for _, c := range dims {
					if a*b*c <= 7*33*7 || a*b*c == 257*33 {
						shapes = append(shapes, tensor.Shape{a, b, c, inner})
					}
				}
			}
		}
	}
	for _, x := range shapes {
		xs := x.Strides()
		for _, perm := range permutations(len(x)) {
			out := make(tensor.Shape, len(x))
			st := make([]int, len(x))
			for i, p := range perm {
				out[i], st[i] = x[p], xs[p]
			}
			for _, esz := range []int{1, 2, 4, 8} {
				checkCopy(t, fmt.Sprintf("permute %v by %v, %d-byte elements", x, perm, esz), esz, out, st, 0, x.Size())
			}
		}
	}
}

// TestStridedCopySlices checks slices (offsets, steps, reversed axes) and repeats
// (stride 0) of the attention shapes and of ragged ones against the reference.
func TestStridedCopySlices(t *testing.T) {
	cases := []struct {
		name    string
		shape   tensor.Shape
		strides []int
		base    int
		src     int
	}{
		{"dk of dkv", tensor.Shape{32, 8, 64, 16}, []int{16384, 2048, 32, 1}, 0, 32 * 64 * 256},
		{"dv of dkv", tensor.Shape{32, 8, 64, 16}, []int{16384, 2048, 32, 1}, 16, 32 * 64 * 256},
		{"odd start", tensor.Shape{7, 33, 16}, []int{33 * 33, 33, 1}, 17, 7 * 33 * 33},
		{"3 of 17", tensor.Shape{257, 3}, []int{17, 1}, 14, 257 * 17},
		{"8 of 12", tensor.Shape{33, 8}, []int{12, 1}, 4, 33 * 12},
		{"stepped", tensor.Shape{33, 8, 4}, []int{64, 8, 2}, 0, 33 * 64},
		{"reversed rows", tensor.Shape{33, 16}, []int{-16, 1}, 32 * 16, 33 * 16},
		{"reversed pieces", tensor.Shape{7, 33, 16}, []int{16, -7 * 16, 1}, 32 * 7 * 16, 33 * 7 * 16},
		{"reversed within", tensor.Shape{7, 16}, []int{16, -1}, 15, 7 * 16},
		{"repeated piece", tensor.Shape{257, 7, 16}, []int{16, 0, 1}, 0, 257 * 16},
		{"one piece", tensor.Shape{16}, []int{1}, 32, 64},
		{"empty", tensor.Shape{0, 16}, []int{16, 1}, 0, 16},
	}
	for _, c := range cases {
		for _, esz := range []int{1, 2, 4, 8} {
			checkCopy(t, fmt.Sprintf("%s, %d-byte elements", c.name, esz), esz, c.shape, c.strides, c.base, c.src)
		}
	}
}

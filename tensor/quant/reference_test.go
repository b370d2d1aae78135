package quant_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/internal/half"
	"github.com/gml-dev/gml/internal/quantref"
	"github.com/gml-dev/gml/tensor/quant"
)

// refBlockBytes is each layout's size, summed field by field from its definition.
var refBlockBytes = map[quant.Format]int{
	quant.Q4_0: 2 + 16, quant.Q4_1: 2 + 2 + 16, quant.Q5_0: 2 + 4 + 16, quant.Q5_1: 2 + 2 + 4 + 16,
	quant.Q8_0: 2 + 32, quant.Q8_1: 2 + 2 + 32, quant.IQ4_NL: 2 + 16, quant.MXFP4: 1 + 16,
	quant.Q2_K: 16 + 64 + 2 + 2, quant.Q3_K: 32 + 64 + 12 + 2, quant.Q4_K: 2 + 2 + 12 + 128,
	quant.Q5_K: 2 + 2 + 12 + 32 + 128, quant.Q6_K: 128 + 64 + 16 + 2, quant.Q8_K: 4 + 256 + 2*16,
	quant.IQ4_XS: 2 + 2 + 4 + 128,
}

// scaleFields are the byte offsets of each format's float16 scales, which random
// blocks fill with finite values so that the comparison is of finite numbers.
var scaleFields = map[quant.Format][]int{
	quant.Q4_0: {0}, quant.Q4_1: {0, 2}, quant.Q5_0: {0}, quant.Q5_1: {0, 2}, quant.Q8_0: {0}, quant.Q8_1: {0, 2},
	quant.IQ4_NL: {0}, quant.Q2_K: {80, 82}, quant.Q3_K: {108}, quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2}, quant.Q6_K: {208},
	quant.IQ4_XS: {0},
}

// randomBlock fills a block of f with random bits and finite random scales.
func randomBlock(rng *rand.Rand, f quant.Format) []byte {
	b := make([]byte, f.BlockBytes())
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for _, off := range scaleFields[f] {
		binary.LittleEndian.PutUint16(b[off:], half.ToF16(float32(rng.NormFloat64())))
	}
	switch f {
	case quant.Q8_K:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(rng.NormFloat64()/100)))
	case quant.MXFP4:
		b[0] = byte(100 + rng.IntN(50)) // scales 2^-27 .. 2^22
	}
	return b
}

func TestBlockSizesMatchTheirDefinitions(t *testing.T) {
	for _, f := range quant.Formats() {
		if f.BlockBytes() != refBlockBytes[f] {
			t.Errorf("%s: %d bytes per block, definition says %d", f, f.BlockBytes(), refBlockBytes[f])
		}
		want := 32
		if f >= quant.Q2_K && f <= quant.Q8_K || f == quant.IQ4_XS {
			want = quant.QK
		}
		if f.BlockSize() != want {
			t.Errorf("%s: %d weights per block, want %d", f, f.BlockSize(), want)
		}
	}
}

func TestDequantizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range quant.Formats() {
		t.Run(f.String(), func(t *testing.T) {
			const nblocks = 64
			src := make([]byte, 0, nblocks*f.BlockBytes())
			for range nblocks {
				src = append(src, randomBlock(rng, f)...)
			}
			zero := make([]byte, f.BlockBytes()) // an all-zero block decodes to zeros
			src = append(src, zero...)
			n := (nblocks + 1) * f.BlockSize()
			dst := make([]float32, n)
			if err := f.Dequantize(dst, src); err != nil {
				t.Fatal(err)
			}
			bs := f.BlockSize()
			ref := quantref.Decode(f, src, n)
			for i, got := range dst {
				// float32 rounding of the scale products, relative to the block's largest
				// weight since an offset can cancel most of a weight.
				var peak float64
				for _, v := range ref[i/bs*bs : (i/bs+1)*bs] {
					peak = max(peak, math.Abs(v))
				}
				want := ref[i]
				if math.Abs(float64(got)-want) > 1e-6*peak {
					t.Fatalf("weight %d (block %d, element %d): got %g, reference %g", i, i/bs, i%bs, got, want)
				}
			}
			for i := n - bs; i < n; i++ {
				if dst[i] != 0 {
					t.Fatalf("zero block decodes element %d to %g", i-(n-bs), dst[i])
				}
			}
		})
	}
}

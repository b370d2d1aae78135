package quant

import "testing"

func TestLengthErrors(t *testing.T) {
	cases := []struct {
		f       Format
		weights int
		bytes   int
	}{
		{Q4_0, 31, 18},     // not whole blocks
		{Q4_0, 32, 17},     // truncated
		{Q4_K, 256, 145},   // too long
		{Q8_0, -32, 0},     // negative
		{Format(0), 32, 0}, // not a format
		{numFormats, 32, 0},
	}
	for _, c := range cases {
		if err := c.f.Dequantize(make([]float32, max(c.weights, 0)), make([]byte, c.bytes)); err == nil && c.weights >= 0 {
			t.Errorf("%s Dequantize %d weights from %d bytes: no error", c.f, c.weights, c.bytes)
		}
		if _, err := c.f.Bytes(c.weights); err == nil && c.weights%max(c.f.BlockSize(), 1) != 0 {
			t.Errorf("%s Bytes(%d): no error", c.f, c.weights)
		}
	}
	if err := Q6_K.Quantize(make([]byte, 210), make([]float32, 256)); err == nil {
		t.Error("Q6_K Quantize: no error, encoding it is not supported")
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		g, err := ParseFormat(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if f, err := ParseFormat("q4_k"); err != nil || f != Q4_K {
		t.Errorf("ParseFormat(q4_k) = %v, %v", f, err)
	}
	if _, err := ParseFormat("Q9_9"); err == nil {
		t.Error("ParseFormat(Q9_9): no error")
	}
}

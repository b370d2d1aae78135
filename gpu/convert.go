package gpu

import "unsafe"

// Float32Bytes views a float32 slice as bytes, without copying, for Upload and Download.
func Float32Bytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// Uint16Bytes views a uint16 slice (f16 or bf16 bits) as bytes, without copying.
func Uint16Bytes(h []uint16) []byte {
	if len(h) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&h[0])), 2*len(h))
}

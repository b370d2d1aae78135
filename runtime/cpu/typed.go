package cpu

import "unsafe"

// number is every element type the generic kernels compute in.
type number interface {
	~float32 | ~float64 | ~int32 | ~int64 | ~uint8
}

// typed views b as a slice of T.
func typed[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

package gemm

import "testing"

// TestNativeIsNEON checks that on arm64 Native runs the neon assembly, and the packing
// and the one-row products theirs, so the reference tests of Native, of allKernels and of
// the transposes cover them rather than a silent fallback to Go.
func TestNativeIsNEON(t *testing.T) {
	k, note, err := chooseKernel("")
	if err != nil || k.name != shapeNEON || !k.asm || note != "" {
		t.Fatalf("default kernel %v (note %q, error %v), want the neon assembly", k, note, err)
	}
	if axpy, dot := nativeVector(); axpy == nil || dot == nil {
		t.Fatal("no assembly AXPY or dot product for the one-row products")
	}
	if transpose4 == nil {
		t.Fatal("no assembly transpose for the packing")
	}
}

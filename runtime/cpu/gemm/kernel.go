package gemm

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// kernelFunc multiplies an mr×k strip of A by `strips` k×nr panels of B and writes alpha
// times the product into the mr×(strips·nr) tile of c whose rows are ldc floats apart:
// added to the tile when add is set, over it otherwise (so C need not be cleared first,
// and alpha costs one multiply per element of C instead of one per packed element of A). Element (i, p) of the A
// strip is a[i·rsA + p·csA]; element (p, j) of B panel t is b[t·offB + p·rsB + j]. So
// one kernel reads A packed (rsA 1, csA mr), transposed as stored (rsA 1, csA lda) or
// row-major as stored (rsA lda, csA 1), and B packed (rsB nr, offB nr·k) or as stored
// (rsB ldb, offB nr). The assembly trusts the caller for bounds.
type kernelFunc func(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool)

// kernel is a micro-kernel with its tile shape: full covers mr rows and strips B panels,
// narrow the same rows and one panel (nil when strips is 1).
type kernel struct {
	name   string // the shape's GML_GEMM_KERNEL name
	mr     int
	strips int
	full   kernelFunc
	narrow kernelFunc
	asm    bool // the assembly code, not its Go equivalent
	tuning
}

// narrowest returns the form that covers one B panel.
func (k *kernel) narrowest() kernelFunc {
	if k.narrow != nil {
		return k.narrow
	}
	return k.full
}

// width is the number of columns of C one call of full updates.
func (k *kernel) width() int { return k.strips * nr }

// String names the kernel's shape and code: "avx512 (12×32, assembly)".
func (k *kernel) String() string {
	code := "Go"
	if k.asm {
		code = "assembly"
	}
	return fmt.Sprintf("%s (%d×%d, %s)", k.name, k.mr, k.width(), code)
}

// The kernel shapes. Each has assembly for the CPUs that can run it (kernel_amd64.go)
// and a Go equivalent with the same packing, so every shape runs, and is tested,
// everywhere.
//   - avx2: 6×16, the C tile in twelve 8-wide registers.
//   - avx512: 12×32, the C tile in twenty-four 16-wide registers, two B panels per call:
//     twice the columns per broadcast of A, which AVX-512's 32 registers allow.
//   - neon: arm64's 6×16, the C tile in twenty-four of the 32 4-wide NEON registers
//     (kernel_arm64.s); its Go code is avx2's.
const (
	shapeAVX2   = "avx2"
	shapeAVX512 = "avx512"
	shapeNEON   = "neon"
)

var shapes = []struct {
	name       string
	mr, strips int
	tuning
}{{shapeAVX2, 6, 1, zen3Tuning}, {shapeAVX512, 12, 2, xeonTuning}, {shapeNEON, 6, 1, zen3Tuning}}

// shapeOf returns the shape named name.
func shapeOf(name string) (mr, strips int, b tuning) {
	for _, s := range shapes {
		if s.name == name {
			return s.mr, s.strips, s.tuning
		}
	}
	panic("gemm: unknown kernel shape " + name)
}

// goKernelOf returns the Go code of a shape.
func goKernelOf(name string) *kernel {
	mr, strips, b := shapeOf(name)
	k := &kernel{name: name, mr: mr, strips: strips, full: goKernel(mr, strips), tuning: b}
	if strips > 1 {
		k.narrow = goKernel(mr, 1)
	}
	return k
}

// kernelOf returns the kernel of a shape: its assembly when the CPU runs it, else its Go
// code.
func kernelOf(name string) *kernel {
	if k := asmKernel(name); k != nil {
		return k
	}
	return goKernelOf(name)
}

var (
	nativeOnce sync.Once
	nativeKern *kernel
	nativeErr  error
	kernelNote string
)

// nativeKernel returns the micro-kernel of the Native implementation: the widest
// assembly kernel the CPU runs (avx512, else avx2; neon on arm64), or the shape
// GML_GEMM_KERNEL names (in Go where the CPU cannot run its assembly, which lets a
// machine without AVX-512 test that shape's packing and edges). Without GML_GEMM_KERNEL
// and without an assembly kernel (an x86-64 CPU without AVX2 and FMA), Native is
// unavailable.
func nativeKernel() (*kernel, error) {
	nativeOnce.Do(func() { nativeKern, kernelNote, nativeErr = chooseKernel(os.Getenv("GML_GEMM_KERNEL")) })
	return nativeKern, nativeErr
}

// chooseKernel resolves a GML_GEMM_KERNEL value to a kernel, a note on any departure from
// the request, and an error when Native cannot run.
func chooseKernel(env string) (*kernel, string, error) {
	if env != "" {
		for _, s := range shapes {
			if s.name == env {
				k := kernelOf(env)
				note := ""
				if !k.asm {
					note = fmt.Sprintf("GML_GEMM_KERNEL=%s: the CPU cannot run its assembly, so its Go code runs", env)
				}
				return k, note, nil
			}
		}
		names := make([]string, len(shapes))
		for i, s := range shapes {
			names[i] = s.name
		}
		note := fmt.Sprintf("GML_GEMM_KERNEL: unknown kernel %q (want one of %s)", env, strings.Join(names, ", "))
		k, _, err := chooseKernel("")
		return k, note, err
	}
	for _, name := range []string{shapeAVX512, shapeAVX2, shapeNEON} {
		if k := asmKernel(name); k != nil {
			return k, "", nil
		}
	}
	return nil, "", errNoNative
}

// goKernel returns the portable micro-kernel of an mr-row tile over `strips` B panels,
// with kernelFunc's contract. It sums one row by four columns at a time in four scalar
// accumulators, which the compiler keeps in registers.
func goKernel(mr, strips int) kernelFunc {
	return func(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool) {
		for s := 0; s < strips; s++ {
			bs := b[s*offB:]
			for i := 0; i < mr; i++ {
				ai := a[i*rsA:]
				cr := c[i*ldc+s*nr : i*ldc+s*nr+nr]
				for j := 0; j < nr; j += 4 {
					var s0, s1, s2, s3 float32
					for p := 0; p < k; p++ {
						av := ai[p*csA]
						bp := (*[4]float32)(bs[p*rsB+j:])
						s0 += av * bp[0]
						s1 += av * bp[1]
						s2 += av * bp[2]
						s3 += av * bp[3]
					}
					if add {
						cr[j] += alpha * s0
						cr[j+1] += alpha * s1
						cr[j+2] += alpha * s2
						cr[j+3] += alpha * s3
					} else {
						cr[j], cr[j+1], cr[j+2], cr[j+3] = alpha*s0, alpha*s1, alpha*s2, alpha*s3
					}
				}
			}
		}
	}
}

// pureGoKernel is PureGo's micro-kernel: the Go code of the avx2 shape.
var pureGoKernel = goKernelOf(shapeAVX2)

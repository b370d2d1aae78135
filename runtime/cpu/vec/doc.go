// Package vec holds the CPU backend's vector math on float32 slices: the exponential
// (alone and shifted and summed, for softmax rows), the error function, GELU and GELU's
// derivative times a gradient each in one pass (Gelu, GeluGrad: the bits of the Erf,
// Exp and Arith steps they replace, with every intermediate value in registers), the
// maximum, elementwise arithmetic (Arith, and ArithRows for a row repeated down a
// batch), comparisons, selection and row spreading (Spread), sums (Sum in float32
// lanes folded into float64 every chunk, SumEach for the sums of many rows in one
// call; AddRows, column sums in float32 that keep their running sums in registers
// across rows, and SumInto in float64), the optimizer updates (AdamStep,
// SGDStep), the dropout mask (DropoutVectors), the scalar float32 functions the
// kernels inline (Expf, Tanhf, Erff), and the AVX-512 rows of attention with 16
// features per head or multiples of 16 (AttnRowsFwd16, AttnRowsFwd and their kin, for
// runtime/cpu; attention16_amd64.s shares the exponential's constants and EXP16 with
// vec_amd64.s through exp_amd64.h).
//
// Decisions:
//   - Each slice function has three codes: AVX-512 (16 lanes), AVX2+FMA (8 lanes), both
//     in Go assembly (vec_amd64.s; the memory-bound elementwise loops and the sums are
//     AVX2 at both levels, in binary_amd64.s and sum_amd64.s), and Go, which also serves
//     other architectures. The widest level the CPU supports is chosen at start with
//     golang.org/x/sys/cpu; GML_SIMD=go, avx2 or avx512 lowers it (a level above what the
//     CPU runs is not taken: Level says what runs). The tests run every level the machine
//     has, and Go, against float64 references.
//   - The assembly computes whole vectors only and stops before a vector holding a lane
//     it does not handle (NaN, or an exponent argument above the range where eˣ is a
//     normal float32). That vector and the tail go through the assembly again, padded
//     into a vector of their own on the stack (call.go), and where it still refuses, one
//     element a vector (or, where nothing written is read, the tail goes as the slice's
//     last whole vector): only the elements it refuses alone get the Go code's answers. So
//     the edge cases have exactly the Go code's answers, the fast path has no branches
//     per lane, and an element's result depends on its arguments alone, not on where a
//     call cuts the slice (a thread's share, a block of a fused loop, a row's tail), at
//     the cost of a copy of at most a vector per call. Arguments below that range flush
//     to zero in both.
//   - The exponential is Cephes's: x = n·ln2 + r with ln2 split in two so n·ln2 is
//     exact, a degree-6 polynomial for eʳ, and 2ⁿ put into the exponent field; about 1
//     ulp. The error function is the rational minimax approximation Eigen uses for
//     float32 (odd degree 13 over even degree 8, the argument clamped to [-4, 4]):
//     within 7e-8 of erf over the whole line in exact arithmetic; as evaluated in float32
//     within 4.2e-7 (a few ulp of 1, the worst near |x| = 3.3-3.9). It replaced a scalar
//     erfc-based erf (1.6e-7) because it vectorises: 4096 values in 5 µs at AVX-512
//     against 330-460 µs, and 115-160 µs for its own Go code. The assembly uses
//     fused multiply-adds where the Go code rounds twice, so the levels may differ in the
//     last bit; each is deterministic, element by element.
//   - Sums (ExpShiftSum) accumulate in float64 lanes, so a long softmax row loses no
//     digits to the order of addition.
//   - The optimizer assembly treats subnormals as zero (MXCSR DAZ and FTZ around its
//     loop) and, through the same padding, takes a slice's tail too, so no element's
//     result depends on where a thread's share ends: moments decaying through the
//     subnormal range cost a microcode assist per operation on Intel cores, an Adam step
//     10-30 times slower. The Go code does not flush (ARM cores handle subnormals at full
//     speed), so it matches the assembly unless a subnormal occurs; the tests check the
//     assembly against an exact Go model of DAZ and FTZ (ftz_test.go).
package vec

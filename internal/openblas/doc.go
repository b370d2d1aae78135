// Package openblas loads Debian's OpenBLAS at run time and calls its single- and
// double-precision GEMM.
//
// Decisions:
//   - No build-time link: the library is opened with dlopen on first use (Load), so the gml
//     binary builds and runs where OpenBLAS is absent; Available then reports false and
//     Load's error says what was tried. Only libdl (part of glibc) is linked. A build
//     without cgo compiles too (nocgo.go) and reports OpenBLAS as unavailable.
//   - Candidates, in order: libopenblas.so.0 (Debian's libopenblas0), libopenblas.so (the
//     -dev symlink), and /usr/lib/x86_64-linux-gnu/libblas.so.3, the alternatives path,
//     accepted only when it exports openblas_get_config (that is, when the alternative
//     currently selected is OpenBLAS and not the slow reference BLAS).
//   - The thread count is set to runtime.NumCPU() when the library loads.
//   - Sgemm and Dgemm do not validate their arguments: package gemm is the public entry
//     point and checks dimensions and slice lengths before calling here.
package openblas

// Package bench holds the benchmark programs behind `gml bench NAME`: each prints one
// JSON object per line on stdout and its notes on stderr. cmd/gml only dispatches to
// Run; the programs live here because they reach into runtime/cpu, package gemm,
// internal/openblas and the gpu package, which the command should not.
//
// Decisions:
//   - One file per benchmark family (cpu.go, gpu.go, nn.go, kernel.go); each registers
//     itself from init with register(name, summary, run). A new family (ag, onnx) adds a
//     file and nothing else.
//   - Every line is a result: bench, case, device, value and unit, plus what was
//     measured (impl: the GEMM implementation behind "ours"; threads: the CPU threads
//     ours used) and, when a reference exists, ref (what it is), ref_threads,
//     ref_value and ratio (ours over the reference). A reference is compared only when
//     it was measured on the same kind of device with the same thread count: no ratio
//     rather than a wrong one.
//   - References come from the same run (OpenBLAS in `bench cpu`) or from a file of
//     JSON lines given with -ref (refs.go): PyTorch's figures (the anchors in
//     ../shared/anchors and the output of bench_torch_cpu.py) or an earlier run of gml
//     bench itself, so a change can be compared with its baseline.
//   - Timing uses wall time on the host for CPU figures (best of several runs, since
//     other processes only ever slow a run down) and GPU timestamps for GPU kernels.
//     Speed is never asserted by a unit test: the tests here check that the programs run
//     and that references match the right figures.
package bench

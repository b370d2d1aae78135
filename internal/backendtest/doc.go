// Package backendtest is gml's one table of op cases, run on every backend against a
// float64 reference, and its gradient checks (modelled on ggml's test-backend-ops).
//
// The table (AllCases, cases_*.go by op family) holds cases: inputs (shapes, dtypes,
// how values are drawn: ranges, ties, kinks to avoid, indices), the graph built on
// them, the dtypes to run in and a tolerance. `go test ./internal/backendtest` runs
// every case on every registered backend that has a device on the machine (the CPU
// always; Vulkan on lavapipe in CI and on a GPU where there is one) and compares each
// result with the reference and with the CPU's. The same test binary, built with
// `go test -c`, runs the same table on the H200.
//
// Decisions:
//   - The reference is an interpreter (Interpreter), not per-case expected values: it
//     evaluates any graph in float64, op by op, rounding each value once to its dtype,
//     so a case is written once and its reference cannot drift from its graph. Each op
//     has one reference function (ref_*.go); the unary and binary ops' scalar functions
//     are rows of the case table itself; the fused ops (softmax, norms, attention, RoPE)
//     are evaluated through tensor.Decompose, which defines them.
//   - Quantised tensors (Q4_0, Q8_0, Q4_K) are decoded in float64 from the formats'
//     definitions (internal/quantref, which also checks tensor/quant's decoders); a
//     cast to a quantised type takes tensor.Quantize's blocks, since the encoder is
//     what defines which representable values a cast picks.
//   - A custom op is as good as its kernel: the shipped kernels have references by
//     name (ref_custom.go), and a case of any other custom op fails for want of one.
//   - Comparisons cannot pass on NaN: a NaN or an infinity must match the reference's
//     exactly, and none may appear where the reference is finite (Compare).
//   - A backend may leave a node to the CPU (a dtype or shape its kernels do not take):
//     the case still runs and is checked, then reports SKIP with what was not run on
//     the device, so the skips of a run list the coverage it lacked. An F32 node of an
//     op the op table gives a GPU shader must run on the GPU unless the case says why
//     not (Case.Decline).
//   - Gradients are checked twice. The rules: in float64, the reference evaluates the
//     backward graph (tensor.GradWithSeed with a random seed) and central differences
//     of the forward graph give the numeric gradient, so a tolerance of 1e-5 holds
//     where single precision needed 3e-3. The backends: the backward graph is one more
//     instance ("grad:<case>") run everywhere like the others.
//   - Tests fail when an op lacks a reference or a case, when a dtype the op table
//     accepts for an op is never run, and when an op with a gradient rule has no
//     gradient case (TestCoverage): a new op cannot go untested on any backend.
//   - Regression cases keep the bugs they caught caught: extreme logits for softmax,
//     log-softmax and cross-entropy; ties in Max, Min and their gradients; Adam with a
//     second moment near zero, with L2 weight decay and decoupled; plain SGD.
package backendtest

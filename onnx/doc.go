// Package onnx loads ONNX models and runs them on gml's engine, on the CPU or the GPU.
//
//	m, err := onnx.Load("squeezenet.onnx")           // parse, check, lower, compile
//	x, _ := onnx.ImageTensor(onnx.ImageNet, img)      // a picture as (1, 3, 224, 224)
//	out, err := m.Run(map[string]any{"input": x})     // any number of times
//	m                                                 // a cell shows the Summary table
//
// Load parses the file with our own protobuf subset of the format (internal/onnxpb),
// reads external data files beside it, flattens model-local functions, and checks that
// every node's operator is supported at its opset, failing with an error that names the
// node, the operator and the opset (ErrUnsupported marks what gml does not implement).
// When every input shape is known, the graph is lowered to one engine graph
// (package tensor) and compiled on the runtime (runtime.Default unless Device or
// Runtime says otherwise), which places the weights on the device once; otherwise the
// first Run does it with the fed shapes. onnx never imports nn or ag: it stands on
// tensor and runtime alone.
//
// Decisions:
//   - Lowering is one function per operator (ops_*.go), registered with the first opset
//     it handles and reading its node through ctx, which tracks the attributes it read:
//     an attribute no lowering reads is an error, never silently ignored. Operators the
//     engine has no op for are compositions of engine ops where they are exact
//     (IsNaN, IsInf, Einsum, Resize, LRN, the recurrent layers, quantisation, the
//     mul, max and min scatter reductions, 3-D
//     convolution and transposed convolution, dilated pooling, Python-style Mod from
//     the engine's fmod).
//   - Every value has a static shape while building. A node whose inputs are all known
//     (initializers, constants, shapes) is folded: lowered into a small graph and run
//     on the CPU at build time, so Shape → Gather → Concat → Reshape chains and constant
//     subgraphs cost nothing per run.
//   - A node that needs on the host a value the graph computes (NonZero's count, a
//     computed Reshape shape or TopK k) ends a stage: the graph up to it is compiled
//     and run, the value is downloaded, and the rest is built with it. Builds are kept
//     per stage and reused while the shapes of their inputs and the values they read
//     are the same; at most four builds of a stage are kept, the oldest freed, so
//     memory does not grow across runs. A static model is one stage, compiled once.
//   - ONNX element types are carried by engine dtypes (DataType.Carrier): int8 to
//     uint16 and the 4- and 2-bit integers in I32, uint32 and uint64 in I64, float64 and
//     the 8- and 4-bit floats in F32. Integer results are wrapped into their type's
//     range after every op that can leave it, so integer arithmetic is exact; float64
//     is computed in float32 precision; 8-bit float casts round (ties to even) and
//     saturate as the format says. Run takes and returns Arrays, which know their ONNX
//     type; an Array of an engine type is a *tensor.Tensor with a label.
//   - Integer products (MatMulInteger, QLinearMatMul, QLinearConv, ConvInteger) run in
//     float32: exact while each sum stays below 2^24.
//   - Initializers of 256 bytes or more are runtime variables: resident on the device
//     across builds. Smaller ones, and folded values, are constants.
//   - CheckCase and FindCases implement the ONNX backend-test layout behind
//     `gml onnx-test`. Outputs match at rtol 1e-3, atol 1e-5 (DefaultTolerance); float16
//     and bfloat16 outputs at a few units in their last place (4e-3 and 3e-2 relative),
//     since the reference rounds after every op and gml's fused kernels round once.
//
// Not supported: control flow (If, Loop, Scan), sequences, maps and optionals, string
// tensors, sparse initializers, random ops and training-mode Dropout, MaxPool's indices
// output, convolutions over more than three spatial axes, and operators of other
// domains. uint64 values of 2^63 and more compare as negative. Half-precision models
// run on the GPU only as far as the Vulkan backend has half-precision kernels (its
// products and layout ops); its elementwise ops fall back to the CPU.
package onnx

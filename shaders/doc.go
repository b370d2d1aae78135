// Package shaders holds gml's GLSL compute shaders (src/), their SPIR-V compiled with
// glslc (spv/, committed and embedded), and the table of variants that maps each SPIR-V
// file to its source and preprocessor defines.
//
// Decisions:
//   - SPIR-V is committed so that building gml needs no shader compiler; `go generate
//     ./shaders` (make shaders) recompiles every variant, and TestSPIRVFresh fails when a
//     committed file differs from what glslc produces now.
//   - Tile sizes, transposes and similar knobs are specialisation constants, so one
//     SPIR-V serves many pipelines and tuning needs no recompilation; only what changes
//     types (the cooperative-matrix shape, bf16 input) is a compile-time define.
//   - Debian's glslc (shaderc 2023.2) compiles GL_NV_cooperative_matrix but not
//     GL_KHR_cooperative_matrix or bfloat16 types, so the tensor-core shader uses the NV
//     extension; bf16 inputs are widened to fp16 when staged in shared memory (exact for
//     values inside fp16's range, about 6e-5 to 65504; larger magnitudes overflow).
package shaders

//go:generate go run ./gen

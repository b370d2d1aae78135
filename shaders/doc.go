// Package shaders holds gml's GLSL compute shaders (src/), their SPIR-V compiled with
// glslc (spv/, committed and embedded), the table of variants that maps each SPIR-V
// file to its source and preprocessor defines, and the list of modules that Go
// generators write instead (Generated: the VK_NV_cooperative_matrix2 matrix products of
// shaders/cm2, built with internal/spirv).
//
// Decisions:
//   - SPIR-V is committed so that building gml needs no shader compiler; `go generate
//     ./shaders` (make shaders) recompiles every variant, and TestSPIRVFresh fails when a
//     committed file differs from what glslc produces now.
//   - Tile sizes, transposes and similar knobs are specialisation constants, so one
//     SPIR-V serves many pipelines and tuning needs no recompilation; only what changes
//     types (the cooperative-matrix shape, bf16 input) is a compile-time define.
//   - Debian's glslc (shaderc 2023.2) compiles GL_NV_cooperative_matrix but not
//     GL_KHR_cooperative_matrix, GL_NV_cooperative_matrix2 or bfloat16 types, so the
//     GLSL tensor-core shader uses the NV extension and widens bf16 inputs to fp16 when
//     staged in shared memory (exact inside fp16's range, about 6e-5 to 65504), and the
//     workgroup-scope shaders (native bf16, 1.4x faster on the H200) are SPIR-V written
//     by a Go generator. `go generate ./shaders` rewrites both kinds, and the freshness
//     tests compare both byte for byte.
package shaders

//go:generate go run ./gen

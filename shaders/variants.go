package shaders

import "github.com/gml-dev/gml/shaders/cm2"

// Variant is one compiled SPIR-V module: a source file in src/ and the defines it is
// compiled with.
type Variant struct {
	Name    string   // SPIR-V file is spv/Name.spv
	Source  string   // file in src/
	Defines []string // each "NAME" or "NAME=VALUE"
}

// Variants lists every SPIR-V module gml ships.
var Variants = []Variant{
	{Name: "matmul_f32", Source: "matmul_f32.comp"},
	{Name: "matmul_vec_f32", Source: "matmul_vec.comp"},
	{Name: "matmul_quant", Source: "matmul_quant.comp"},
	{Name: "elementwise", Source: "elementwise.comp"},
	{Name: "reduce", Source: "reduce.comp"},
	{Name: "norm_softmax", Source: "norm_softmax.comp"},
	{Name: "norm", Source: "norm.comp"},
	{Name: "training_optim", Source: "training_optim.comp"},
	{Name: "matmul_coop_f16_16x8x16", Source: "matmul_coop.comp", Defines: []string{"SHAPE_N=8"}},
	{Name: "matmul_coop_f16_16x16x16", Source: "matmul_coop.comp", Defines: []string{"SHAPE_N=16"}},
	{Name: "matmul_coop_bf16_16x8x16", Source: "matmul_coop.comp", Defines: []string{"SHAPE_N=8", "BF16"}},
	// f32 products with the default big tiles compiled in (gpu/matmul.go picks them by
	// name), unrolled by glslc rather than left to the driver.
	{Name: "matmul_f32_128x128x16_8x8", Source: "matmul_f32.comp", Defines: []string{"TILE=128,128,16,8,8"}},
	{Name: "matmul_f32_128x128x16_8x4", Source: "matmul_f32.comp", Defines: []string{"TILE=128,128,16,8,4"}},
	{Name: "conv", Source: "conv.comp"},
	{Name: "conv_im2col", Source: "conv_im2col.comp"},
	{Name: "conv_splitk", Source: "conv_splitk.comp"},
	{Name: "conv_pool", Source: "conv_pool.comp"},
	{Name: "attention", Source: "attention.comp"},
	{Name: "attention_bwd_stats", Source: "attention_bwd.comp", Defines: []string{"PASS=0"}},
	{Name: "attention_bwd_q", Source: "attention_bwd.comp", Defines: []string{"PASS=1"}},
	{Name: "attention_bwd_kv", Source: "attention_bwd.comp", Defines: []string{"PASS=2"}},
	{Name: "attention_rope", Source: "attention_rope.comp"},
	{Name: "layout", Source: "layout.comp"},
	{Name: "index", Source: "index.comp"},
	{Name: "index_add", Source: "index_add.comp"},
	{Name: "cast", Source: "cast.comp"},
	{Name: "compare", Source: "compare.comp"},
	{Name: "training_dropout", Source: "training_dropout.comp"},
	{Name: "reduce_scan", Source: "reduce_scan.comp"},
	{Name: "ssm_conv", Source: "ssm_conv.comp"},
	{Name: "ssm_scan", Source: "ssm_scan.comp"},
	{Name: "ssm_heads", Source: "ssm_heads.comp"},
}

// Generated lists the modules that Go generators write instead of glslc: the
// VK_NV_cooperative_matrix2 matrix products of shaders/cm2 (workgroup-scope
// cooperative matrices with tensor-layout loads; same bindings and push constants
// as matmul_coop.comp), named matmul_cm2_ELEM_BMxBNxBK. Their requirements on the
// device and on operand alignment are in cm2's package doc.
var Generated = []cm2.Config{
	// 128x128x32 with 128 invocations ran at 256 TFLOP/s (f16, n=4096) on the H200, 239
	// at 2048 and 267 at 8192; 128x256x32 with 256 invocations 247, 228 and 262. Every
	// variant compiles to 255 registers per invocation there. The sweep is in
	// gpu/PERF.md.
	{Elem: "f16", BM: 128, BN: 128, BK: 32, Threads: 128, Unroll: 4},
	{Elem: "bf16", BM: 128, BN: 128, BK: 32, Threads: 128, Unroll: 4},
}

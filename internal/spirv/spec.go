package spirv

// Numbers from the SPIR-V specification. Core values are those of
// KhronosGroup/SPIRV-Headers include/spirv/unified1/spirv.hpp (and
// spirv.core.grammar.json for operand order); extension values cite the extension's
// specification in KhronosGroup/SPIRV-Registry as well.

// Header words (SPIR-V specification 2.3 "Physical Layout of a SPIR-V Module").
const (
	Magic = 0x07230203
	// Version16 is SPIR-V 1.6, which SPV_NV_cooperative_matrix2 requires.
	Version16 = 0x00010600
	Version13 = 0x00010300
)

// Op is an opcode (the low 16 bits of an instruction's first word).
type Op uint16

// Core opcodes (spirv.hpp, enum Op).
const (
	OpName                       Op = 5
	OpMemberName                 Op = 6
	OpExtension                  Op = 10
	OpExtInstImport              Op = 11
	OpMemoryModel                Op = 14
	OpEntryPoint                 Op = 15
	OpExecutionMode              Op = 16
	OpCapability                 Op = 17
	OpTypeVoid                   Op = 19
	OpTypeBool                   Op = 20
	OpTypeInt                    Op = 21
	OpTypeFloat                  Op = 22
	OpTypeVector                 Op = 23
	OpTypeArray                  Op = 28
	OpTypeRuntimeArray           Op = 29
	OpTypeStruct                 Op = 30
	OpTypePointer                Op = 32
	OpTypeFunction               Op = 33
	OpConstantTrue               Op = 41
	OpConstantFalse              Op = 42
	OpConstant                   Op = 43
	OpConstantComposite          Op = 44
	OpSpecConstant               Op = 50
	OpFunction                   Op = 54
	OpFunctionEnd                Op = 56
	OpVariable                   Op = 59
	OpLoad                       Op = 61
	OpStore                      Op = 62
	OpAccessChain                Op = 65
	OpDecorate                   Op = 71
	OpMemberDecorate             Op = 72
	OpCompositeExtract           Op = 81
	OpFConvert                   Op = 115
	OpIAdd                       Op = 128
	OpFAdd                       Op = 129
	OpISub                       Op = 130
	OpIMul                       Op = 132
	OpFMul                       Op = 133
	OpUDiv                       Op = 134
	OpUMod                       Op = 137
	OpMatrixTimesScalar          Op = 143
	OpLogicalOr                  Op = 166
	OpLogicalAnd                 Op = 167
	OpLogicalNot                 Op = 168
	OpSelect                     Op = 169
	OpIEqual                     Op = 170
	OpINotEqual                  Op = 171
	OpULessThan                  Op = 176
	OpULessThanEqual             Op = 178
	OpFOrdEqual                  Op = 180
	OpFUnordNotEqual             Op = 183
	OpBitwiseOr                  Op = 197
	OpBitwiseAnd                 Op = 199
	OpControlBarrier             Op = 224
	OpPhi                        Op = 245
	OpLoopMerge                  Op = 246
	OpSelectionMerge             Op = 247
	OpLabel                      Op = 248
	OpBranch                     Op = 249
	OpBranchConditional          Op = 250
	OpReturn                     Op = 253
	OpReturnValue                Op = 254
	OpUnreachable                Op = 255
	OpTypeCooperativeMatrixKHR   Op = 4456 // SPV_KHR_cooperative_matrix 3.42.6
	OpCooperativeMatrixLoadKHR   Op = 4457
	OpCooperativeMatrixStoreKHR  Op = 4458
	OpCooperativeMatrixMulAddKHR Op = 4459 // SPV_KHR_cooperative_matrix 3.42.13
)

// SPV_NV_cooperative_matrix2 and SPV_NV_tensor_addressing opcodes (SPIRV-Registry
// extensions/NV/SPV_NV_cooperative_matrix2.asciidoc 3.49.8 and
// SPV_NV_tensor_addressing.asciidoc; the same numbers in spirv.hpp).
const (
	OpCooperativeMatrixLoadTensorNV  Op = 5367 // Result Type, Result, Pointer, Object, TensorLayout, MemoryAccess literal, TensorAddressingOperands literal
	OpCooperativeMatrixStoreTensorNV Op = 5368 // Pointer, Object, TensorLayout, MemoryAccess literal, TensorAddressingOperands literal
	OpTypeTensorLayoutNV             Op = 5370 // Result, Dim <id>, ClampMode <id>
	OpTypeTensorViewNV               Op = 5371
	OpCreateTensorLayoutNV           Op = 5372 // Result Type, Result
	OpTensorLayoutSetDimensionNV     Op = 5373 // Result Type, Result, TensorLayout, Dim0..Dim<n-1>
	OpTensorLayoutSetStrideNV        Op = 5374 // Result Type, Result, TensorLayout, Stride0..Stride<n-1>
	OpTensorLayoutSliceNV            Op = 5375 // Result Type, Result, TensorLayout, Offset0, Span0, ..., Offset<n-1>, Span<n-1>
	OpTensorLayoutSetClampValueNV    Op = 5376 // Result Type, Result, TensorLayout, Value
)

// Capabilities (spirv.hpp, enum Capability).
const (
	CapabilityShader                              = 1
	CapabilityFloat16                             = 9
	CapabilityInt16                               = 22
	CapabilityStorageBuffer16BitAccess            = 4433 // core since SPIR-V 1.3
	CapabilityVulkanMemoryModel                   = 5345
	CapabilityBFloat16TypeKHR                     = 5116 // SPV_KHR_bfloat16
	CapabilityBFloat16CooperativeMatrixKHR        = 5118 // SPV_KHR_bfloat16
	CapabilityCooperativeMatrixTensorAddressingNV = 5433 // SPV_NV_cooperative_matrix2
	CapabilityCooperativeMatrixBlockLoadsNV       = 5434 // SPV_NV_cooperative_matrix2
	CapabilityTensorAddressingNV                  = 5439 // SPV_NV_tensor_addressing
	CapabilityCooperativeMatrixKHR                = 6022 // SPV_KHR_cooperative_matrix
)

// Addressing and memory models (spirv.hpp, enums AddressingModel and MemoryModel).
const (
	AddressingLogical  = 0
	MemoryModelGLSL450 = 1
	MemoryModelVulkan  = 3
)

// Execution models and modes (spirv.hpp).
const (
	ExecutionModelGLCompute = 5
	ExecutionModeLocalSize  = 17
)

// Storage classes (spirv.hpp, enum StorageClass).
const (
	StorageUniformConstant = 0
	StorageInput           = 1
	StorageWorkgroup       = 4
	StoragePushConstant    = 9
	StorageFunction        = 7
	StorageStorageBuffer   = 12
)

// Decorations (spirv.hpp, enum Decoration).
const (
	DecorationSpecID        = 1
	DecorationBlock         = 2
	DecorationArrayStride   = 6
	DecorationBuiltIn       = 11
	DecorationNonWritable   = 24
	DecorationNonReadable   = 25
	DecorationBinding       = 33
	DecorationDescriptorSet = 34
	DecorationOffset        = 35
)

// Built-ins (spirv.hpp, enum BuiltIn).
const (
	BuiltInNumWorkgroups        = 24
	BuiltInWorkgroupID          = 26
	BuiltInLocalInvocationID    = 27
	BuiltInGlobalInvocationID   = 28
	BuiltInLocalInvocationIndex = 29
)

// Scopes (spirv.hpp, enum Scope).
const (
	ScopeDevice    = 1
	ScopeWorkgroup = 2
	ScopeSubgroup  = 3
)

// Function, selection and loop controls and memory-access masks (spirv.hpp).
const (
	FunctionControlNone   = 0
	SelectionControlNone  = 0
	LoopControlNone       = 0
	LoopControlUnroll     = 1
	LoopControlDontUnroll = 2
	MemoryAccessNone      = 0
)

// FP encodings (SPV_KHR_bfloat16, "FP Encoding"): the optional third operand of
// OpTypeFloat.
const FPEncodingBFloat16KHR = 0

// Cooperative matrix uses (SPV_KHR_cooperative_matrix, "Cooperative Matrix Use").
const (
	CoopMatUseA           = 0
	CoopMatUseB           = 1
	CoopMatUseAccumulator = 2
)

// Tensor clamp modes (SPV_NV_tensor_addressing, "Tensor Clamp Mode") and tensor
// addressing operand masks (SPV_NV_cooperative_matrix2, "Tensor Addressing
// Operands").
const (
	TensorClampUndefined   = 0
	TensorClampConstant    = 1
	TensorClampToEdge      = 2
	TensorAddressingNone   = 0
	TensorAddressingView   = 1
	TensorAddressingDecode = 2
)

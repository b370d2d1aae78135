package spirv

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// opInfo says how to print an opcode: its name and whether a result type and a
// result id lead its operands.
type opInfo struct {
	name            string
	resType, result bool
}

// opInfos covers the opcodes in spec.go. Opcodes outside it print as Op<number>.
var opInfos = map[Op]opInfo{
	OpName: {"OpName", false, false}, OpMemberName: {"OpMemberName", false, false},
	OpExtension: {"OpExtension", false, false}, OpExtInstImport: {"OpExtInstImport", false, true},
	OpMemoryModel: {"OpMemoryModel", false, false}, OpEntryPoint: {"OpEntryPoint", false, false},
	OpExecutionMode: {"OpExecutionMode", false, false}, OpCapability: {"OpCapability", false, false},
	OpTypeVoid: {"OpTypeVoid", false, true}, OpTypeBool: {"OpTypeBool", false, true},
	OpTypeInt: {"OpTypeInt", false, true}, OpTypeFloat: {"OpTypeFloat", false, true},
	OpTypeVector: {"OpTypeVector", false, true}, OpTypeArray: {"OpTypeArray", false, true},
	OpTypeRuntimeArray: {"OpTypeRuntimeArray", false, true}, OpTypeStruct: {"OpTypeStruct", false, true},
	OpTypePointer: {"OpTypePointer", false, true}, OpTypeFunction: {"OpTypeFunction", false, true},
	OpConstantTrue: {"OpConstantTrue", true, true}, OpConstantFalse: {"OpConstantFalse", true, true},
	OpConstant: {"OpConstant", true, true}, OpConstantComposite: {"OpConstantComposite", true, true},
	OpSpecConstant: {"OpSpecConstant", true, true}, OpFunction: {"OpFunction", true, true},
	OpFunctionEnd: {"OpFunctionEnd", false, false}, OpVariable: {"OpVariable", true, true},
	OpLoad: {"OpLoad", true, true}, OpStore: {"OpStore", false, false},
	OpAccessChain: {"OpAccessChain", true, true}, OpDecorate: {"OpDecorate", false, false},
	OpMemberDecorate: {"OpMemberDecorate", false, false}, OpCompositeExtract: {"OpCompositeExtract", true, true},
	OpIAdd: {"OpIAdd", true, true}, OpFAdd: {"OpFAdd", true, true}, OpISub: {"OpISub", true, true},
	OpIMul: {"OpIMul", true, true}, OpFMul: {"OpFMul", true, true}, OpUDiv: {"OpUDiv", true, true},
	OpUMod: {"OpUMod", true, true}, OpFConvert: {"OpFConvert", true, true}, OpMatrixTimesScalar: {"OpMatrixTimesScalar", true, true},
	OpLogicalOr: {"OpLogicalOr", true, true}, OpLogicalAnd: {"OpLogicalAnd", true, true},
	OpLogicalNot: {"OpLogicalNot", true, true}, OpSelect: {"OpSelect", true, true},
	OpIEqual: {"OpIEqual", true, true}, OpINotEqual: {"OpINotEqual", true, true},
	OpULessThan: {"OpULessThan", true, true}, OpULessThanEqual: {"OpULessThanEqual", true, true},
	OpFOrdEqual: {"OpFOrdEqual", true, true}, OpFUnordNotEqual: {"OpFUnordNotEqual", true, true},
	OpBitwiseOr: {"OpBitwiseOr", true, true}, OpBitwiseAnd: {"OpBitwiseAnd", true, true},
	OpControlBarrier: {"OpControlBarrier", false, false}, OpPhi: {"OpPhi", true, true},
	OpLoopMerge: {"OpLoopMerge", false, false}, OpSelectionMerge: {"OpSelectionMerge", false, false},
	OpLabel: {"OpLabel", false, true}, OpBranch: {"OpBranch", false, false},
	OpBranchConditional: {"OpBranchConditional", false, false}, OpReturn: {"OpReturn", false, false},
	OpReturnValue:                    {"OpReturnValue", false, false},
	OpUnreachable:                    {"OpUnreachable", false, false},
	OpTypeCooperativeMatrixKHR:       {"OpTypeCooperativeMatrixKHR", false, true},
	OpCooperativeMatrixLoadKHR:       {"OpCooperativeMatrixLoadKHR", true, true},
	OpCooperativeMatrixStoreKHR:      {"OpCooperativeMatrixStoreKHR", false, false},
	OpCooperativeMatrixMulAddKHR:     {"OpCooperativeMatrixMulAddKHR", true, true},
	OpCooperativeMatrixLoadTensorNV:  {"OpCooperativeMatrixLoadTensorNV", true, true},
	OpCooperativeMatrixStoreTensorNV: {"OpCooperativeMatrixStoreTensorNV", false, false},
	OpTypeTensorLayoutNV:             {"OpTypeTensorLayoutNV", false, true},
	OpTypeTensorViewNV:               {"OpTypeTensorViewNV", false, true},
	OpCreateTensorLayoutNV:           {"OpCreateTensorLayoutNV", true, true},
	OpTensorLayoutSetDimensionNV:     {"OpTensorLayoutSetDimensionNV", true, true},
	OpTensorLayoutSetStrideNV:        {"OpTensorLayoutSetStrideNV", true, true},
	OpTensorLayoutSliceNV:            {"OpTensorLayoutSliceNV", true, true},
	OpTensorLayoutSetClampValueNV:    {"OpTensorLayoutSetClampValueNV", true, true},
}

// stringOps lead with ids or literals and then carry one literal string; the value
// is the number of words before the string.
var stringOps = map[Op]int{OpExtension: 0, OpExtInstImport: 1, OpName: 1, OpMemberName: 2, OpEntryPoint: 2}

// Instruction is one decoded instruction: its opcode and the words after the first.
type Instruction struct {
	Op       Op
	Operands []uint32
}

// Binary is a decoded module.
type Binary struct {
	Version, Bound uint32
	Insts          []Instruction
}

// Parse decodes a little-endian SPIR-V binary into its header fields and
// instructions; it checks only the framing (magic, word counts).
func Parse(b []byte) (*Binary, error) {
	if len(b)%4 != 0 || len(b) < 20 {
		return nil, fmt.Errorf("spirv: %d bytes is not a SPIR-V module", len(b))
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	if w[0] != Magic {
		return nil, fmt.Errorf("spirv: bad magic %#x", w[0])
	}
	p := &Binary{Version: w[1], Bound: w[3]}
	for i := 5; i < len(w); {
		n := int(w[i] >> 16)
		if n == 0 || i+n > len(w) {
			return nil, fmt.Errorf("spirv: instruction at word %d has bad word count %d", i, n)
		}
		p.Insts = append(p.Insts, Instruction{Op(w[i] & 0xffff), w[i+1 : i+n]})
		i += n
	}
	return p, nil
}

// Dump renders a little-endian SPIR-V binary as text, one instruction a line, in the
// spirit of spirv-dis but without its grammar: result ids print as %N, other operands
// as numbers (ids and literals alike), literal strings quoted. It is for reviewing
// modules that contain instructions the installed SPIR-V tools do not know.
func Dump(b []byte) (string, error) {
	p, err := Parse(b)
	if err != nil {
		return "", err
	}
	var s strings.Builder
	fmt.Fprintf(&s, "; version %d.%d, bound %d\n", p.Version>>16, p.Version>>8&0xff, p.Bound)
	for _, in := range p.Insts {
		op, ops := in.Op, in.Operands
		info, ok := opInfos[op]
		if !ok {
			info.name = fmt.Sprintf("Op%d", op)
		}
		var typ string
		if info.resType && len(ops) > 0 {
			typ, ops = fmt.Sprintf(" %%%d", ops[0]), ops[1:]
		}
		if info.result && len(ops) > 0 {
			fmt.Fprintf(&s, "%8s = ", fmt.Sprintf("%%%d", ops[0]))
			ops = ops[1:]
		} else {
			s.WriteString(strings.Repeat(" ", 11))
		}
		s.WriteString(info.name + typ)
		lead, hasString := stringOps[op]
		if info.result && hasString {
			lead-- // the result id was printed already
		}
		for j := 0; j < len(ops); j++ {
			if hasString && j == lead {
				str, used := decodeString(ops[j:])
				fmt.Fprintf(&s, " %q", str)
				j += used - 1
				continue
			}
			fmt.Fprintf(&s, " %d", ops[j])
		}
		s.WriteByte('\n')
	}
	return s.String(), nil
}

// decodeString reads a NUL-terminated literal string and returns it with the
// number of words it occupies.
func decodeString(w []uint32) (string, int) {
	var b []byte
	for i, x := range w {
		for k := 0; k < 4; k++ {
			c := byte(x >> (8 * k))
			if c == 0 {
				return string(b), i + 1
			}
			b = append(b, c)
		}
	}
	return string(b), len(w)
}

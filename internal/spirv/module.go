package spirv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ID is a SPIR-V result id. Zero is never a valid id.
type ID uint32

// Module accumulates the sections of one SPIR-V module. The zero value is not
// usable; call New.
type Module struct {
	version uint32
	next    ID // next free id; the header's bound is next when Words is called

	capabilities []uint32
	extensions   []uint32
	imports      []uint32
	memoryModel  []uint32
	entryPoints  []uint32
	execModes    []uint32
	names        []uint32
	annotations  []uint32
	globals      []uint32 // types, constants and global variables, in first-use order
	functions    []uint32

	haveCap map[uint32]bool
	haveExt map[string]bool
	dedup   map[string]ID // types and constants by opcode and operands

	errs []error
}

// New returns an empty module of the given SPIR-V version (Version16, ...).
func New(version uint32) *Module {
	return &Module{
		version: version,
		next:    1,
		haveCap: map[uint32]bool{},
		haveExt: map[string]bool{},
		dedup:   map[string]ID{},
	}
}

// ID allocates a fresh result id.
func (m *Module) ID() ID {
	id := m.next
	m.next++
	return id
}

// failf records a construction error; Words reports all of them.
func (m *Module) failf(format string, args ...any) {
	m.errs = append(m.errs, fmt.Errorf(format, args...))
}

// Inst encodes one instruction: the word count and opcode, then the operands.
func Inst(op Op, operands ...uint32) []uint32 {
	w := make([]uint32, 0, 1+len(operands))
	w = append(w, uint32(len(operands)+1)<<16|uint32(op))
	return append(w, operands...)
}

// inst is Inst with the 65535-word limit checked.
func (m *Module) inst(op Op, operands ...uint32) []uint32 {
	if len(operands)+1 > 0xffff {
		m.failf("spirv: instruction %d has %d words, over the 65535 limit", op, len(operands)+1)
	}
	return Inst(op, operands...)
}

// String encodes a literal string: UTF-8 bytes, NUL-terminated, padded with NULs to
// a whole number of little-endian words.
func String(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

// Capability declares a capability once, however often it is asked for.
func (m *Module) Capability(c uint32) {
	if !m.haveCap[c] {
		m.haveCap[c] = true
		m.capabilities = append(m.capabilities, m.inst(OpCapability, c)...)
	}
}

// Extension declares a SPIR-V extension once.
func (m *Module) Extension(name string) {
	if !m.haveExt[name] {
		m.haveExt[name] = true
		m.extensions = append(m.extensions, m.inst(OpExtension, String(name)...)...)
	}
}

// ExtInstImport imports an extended instruction set ("GLSL.std.450") and returns
// its id.
func (m *Module) ExtInstImport(name string) ID {
	id := m.ID()
	m.imports = append(m.imports, m.inst(OpExtInstImport, append([]uint32{uint32(id)}, String(name)...)...)...)
	return id
}

// MemoryModel sets the addressing and memory model (exactly one per module).
func (m *Module) MemoryModel(addressing, memory uint32) {
	if m.memoryModel != nil {
		m.failf("spirv: memory model set twice")
	}
	m.memoryModel = m.inst(OpMemoryModel, addressing, memory)
}

// EntryPoint declares fn as an entry point. From SPIR-V 1.4 on, interface must list
// every global variable the entry point uses, of any storage class.
func (m *Module) EntryPoint(model uint32, fn ID, name string, interface_ ...ID) {
	ops := append([]uint32{model, uint32(fn)}, String(name)...)
	for _, v := range interface_ {
		ops = append(ops, uint32(v))
	}
	m.entryPoints = append(m.entryPoints, m.inst(OpEntryPoint, ops...)...)
}

// ExecutionMode adds an execution mode with literal operands to entry point fn.
func (m *Module) ExecutionMode(fn ID, mode uint32, literals ...uint32) {
	m.execModes = append(m.execModes, m.inst(OpExecutionMode, append([]uint32{uint32(fn), mode}, literals...)...)...)
}

// Name attaches a debug name to id.
func (m *Module) Name(id ID, name string) {
	m.names = append(m.names, m.inst(OpName, append([]uint32{uint32(id)}, String(name)...)...)...)
}

// MemberName attaches a debug name to a member of struct type id.
func (m *Module) MemberName(id ID, member uint32, name string) {
	m.names = append(m.names, m.inst(OpMemberName, append([]uint32{uint32(id), member}, String(name)...)...)...)
}

// Decorate adds decoration d, with literal operands, to id.
func (m *Module) Decorate(id ID, d uint32, literals ...uint32) {
	m.annotations = append(m.annotations, m.inst(OpDecorate, append([]uint32{uint32(id), d}, literals...)...)...)
}

// MemberDecorate adds decoration d to member of struct type id.
func (m *Module) MemberDecorate(id ID, member, d uint32, literals ...uint32) {
	m.annotations = append(m.annotations, m.inst(OpMemberDecorate, append([]uint32{uint32(id), member, d}, literals...)...)...)
}

// Type declares a type (or returns the id of an identical earlier declaration):
// op is a type opcode and operands follow the result id.
func (m *Module) Type(op Op, operands ...uint32) ID {
	return m.unique(op, 0, operands)
}

// Const declares a constant of type t whose operands follow the result type and id
// (OpConstant's value words, OpConstantComposite's constituents...), deduplicated.
func (m *Module) Const(op Op, t ID, operands ...uint32) ID {
	return m.unique(op, t, operands)
}

// unique declares op once per (op, t, operands).
func (m *Module) unique(op Op, t ID, operands []uint32) ID {
	var key strings.Builder
	fmt.Fprint(&key, op, ":", t)
	for _, w := range operands {
		fmt.Fprint(&key, ",", w)
	}
	if id, ok := m.dedup[key.String()]; ok {
		return id
	}
	id := m.declare(op, t, operands)
	m.dedup[key.String()] = id
	return id
}

// declare appends a global declaration with a fresh result id (after the result
// type when t != 0).
func (m *Module) declare(op Op, t ID, operands []uint32) ID {
	id := m.ID()
	ops := []uint32{uint32(id)}
	if t != 0 {
		ops = []uint32{uint32(t), uint32(id)}
	}
	m.globals = append(m.globals, m.inst(op, append(ops, operands...)...)...)
	return id
}

// Declare adds a global declaration that must not be deduplicated (a struct that
// will be decorated, a specialisation constant) and returns its id.
func (m *Module) Declare(op Op, t ID, operands ...uint32) ID {
	return m.declare(op, t, operands)
}

// Common types.

// Void returns the void type.
func (m *Module) Void() ID { return m.Type(OpTypeVoid) }

// Bool returns the boolean type.
func (m *Module) Bool() ID { return m.Type(OpTypeBool) }

// Uint returns the unsigned integer type of the given width.
func (m *Module) Uint(width uint32) ID { return m.Type(OpTypeInt, width, 0) }

// Float returns the IEEE floating-point type of the given width.
func (m *Module) Float(width uint32) ID { return m.Type(OpTypeFloat, width) }

// Vector returns the vector type of n components of type t.
func (m *Module) Vector(t ID, n uint32) ID { return m.Type(OpTypeVector, uint32(t), n) }

// Pointer returns the pointer type to t in storage class sc.
func (m *Module) Pointer(sc uint32, t ID) ID { return m.Type(OpTypePointer, sc, uint32(t)) }

// FuncType returns the function type with the given result and parameter types.
func (m *Module) FuncType(result ID, params ...ID) ID {
	ops := []uint32{uint32(result)}
	for _, p := range params {
		ops = append(ops, uint32(p))
	}
	return m.Type(OpTypeFunction, ops...)
}

// Struct declares a new struct type with the given member types.
func (m *Module) Struct(members ...ID) ID {
	ops := make([]uint32, len(members))
	for i, t := range members {
		ops[i] = uint32(t)
	}
	return m.declare(OpTypeStruct, 0, ops)
}

// RuntimeArray declares a new runtime array of t with the given ArrayStride.
func (m *Module) RuntimeArray(t ID, stride uint32) ID {
	id := m.declare(OpTypeRuntimeArray, 0, []uint32{uint32(t)})
	m.Decorate(id, DecorationArrayStride, stride)
	return id
}

// Common constants.

// Uint32 returns the 32-bit unsigned integer constant v.
func (m *Module) Uint32(v uint32) ID { return m.Const(OpConstant, m.Uint(32), v) }

// Float32 returns the 32-bit float constant v.
func (m *Module) Float32(v float32) ID {
	return m.Const(OpConstant, m.Float(32), math.Float32bits(v))
}

// SpecUint32 declares a 32-bit unsigned specialisation constant with default v and
// SpecId id.
func (m *Module) SpecUint32(specID, v uint32) ID {
	c := m.Declare(OpSpecConstant, m.Uint(32), v)
	m.Decorate(c, DecorationSpecID, specID)
	return c
}

// Variable declares a global variable of pointer type ptr in storage class sc.
func (m *Module) Variable(ptr ID, sc uint32) ID {
	return m.declare(OpVariable, ptr, []uint32{sc})
}

// Words returns the module as SPIR-V words: the header, then every section in the
// order the specification requires.
func (m *Module) Words() ([]uint32, error) {
	if m.memoryModel == nil {
		m.failf("spirv: no memory model")
	}
	if err := errors.Join(m.errs...); err != nil {
		return nil, err
	}
	w := []uint32{Magic, m.version, 0, uint32(m.next), 0}
	for _, s := range [][]uint32{m.capabilities, m.extensions, m.imports, m.memoryModel, m.entryPoints,
		m.execModes, m.names, m.annotations, m.globals, m.functions} {
		w = append(w, s...)
	}
	return w, nil
}

// Bytes returns Words as little-endian bytes, the form Vulkan and the SPIR-V tools
// read.
func (m *Module) Bytes() ([]byte, error) {
	w, err := m.Words()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 4*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b, nil
}

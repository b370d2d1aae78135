package spirv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// validate runs spirv-val (Debian package spirv-tools) on b for Vulkan 1.3.
func validate(t *testing.T, b []byte) {
	t.Helper()
	if _, err := exec.LookPath("spirv-val"); err != nil {
		t.Fatalf("spirv-val is needed to check generated modules (Debian package spirv-tools): %v", err)
	}
	path := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("spirv-val", "--target-env", "vulkan1.3", path).CombinedOutput(); err != nil {
		t.Fatalf("spirv-val rejects the module: %v\n%s", err, out)
	}
}

// computeModule builds a Vulkan compute shader that, for workgroup x, loops
// i over [0, n) (n a push constant) and writes out[x*n+i] = in[x*n+i] * 2 when
// x is even and in[...] otherwise: storage buffers, push constants, a built-in,
// a loop and a selection.
func computeModule() *Module {
	m := New(Version16)
	m.Capability(CapabilityShader)
	m.MemoryModel(AddressingLogical, MemoryModelGLSL450)

	u32, f32 := m.Uint(32), m.Float(32)
	arr := m.RuntimeArray(f32, 4)
	buf := m.Struct(arr)
	m.Decorate(buf, DecorationBlock)
	m.MemberDecorate(buf, 0, DecorationOffset, 0)
	bufPtr := m.Pointer(StorageStorageBuffer, buf)
	in := m.Variable(bufPtr, StorageStorageBuffer)
	out := m.Variable(bufPtr, StorageStorageBuffer)
	for i, v := range []ID{in, out} {
		m.Decorate(v, DecorationDescriptorSet, 0)
		m.Decorate(v, DecorationBinding, uint32(i))
	}
	push := m.Struct(u32)
	m.Decorate(push, DecorationBlock)
	m.MemberDecorate(push, 0, DecorationOffset, 0)
	pc := m.Variable(m.Pointer(StoragePushConstant, push), StoragePushConstant)
	v3 := m.Vector(u32, 3)
	wg := m.Variable(m.Pointer(StorageInput, v3), StorageInput)
	m.Decorate(wg, DecorationBuiltIn, BuiltInWorkgroupID)

	f := m.Function(m.Void(), m.FuncType(m.Void()))
	i := f.Var(u32)
	f.Store(i, m.Uint32(0))
	n := f.Load(u32, f.Res(OpAccessChain, m.Pointer(StoragePushConstant, u32), uint32(pc), uint32(m.Uint32(0))))
	x := f.Res(OpCompositeExtract, u32, uint32(f.Load(v3, wg)), 0)
	base := f.Res(OpIMul, u32, uint32(x), uint32(n))
	even := f.Res(OpIEqual, m.Bool(), uint32(f.Res(OpUMod, u32, uint32(x), uint32(m.Uint32(2)))), uint32(m.Uint32(0)))
	elem := m.Pointer(StorageStorageBuffer, f32)
	f.Loop(LoopControlNone,
		func() ID { return f.Res(OpULessThan, m.Bool(), uint32(f.Load(u32, i)), uint32(n)) },
		func() {
			idx := f.Res(OpIAdd, u32, uint32(base), uint32(f.Load(u32, i)))
			v := f.Load(f32, f.Res(OpAccessChain, elem, uint32(in), uint32(m.Uint32(0)), uint32(idx)))
			dst := f.Res(OpAccessChain, elem, uint32(out), uint32(m.Uint32(0)), uint32(idx))
			f.IfElse(even,
				func() { f.Store(dst, f.Res(OpFMul, f32, uint32(v), uint32(m.Float32(2)))) },
				func() { f.Store(dst, v) })
		},
		func() { f.Store(i, f.Res(OpIAdd, u32, uint32(f.Load(u32, i)), uint32(m.Uint32(1)))) })
	f.Op(OpReturn)
	f.End()
	m.EntryPoint(ExecutionModelGLCompute, f.ID(), "main", in, out, pc, wg)
	m.ExecutionMode(f.ID(), ExecutionModeLocalSize, 1, 1, 1)
	m.Name(f.ID(), "main")
	return m
}

func TestComputeModuleValidates(t *testing.T) {
	m := computeModule()
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	validate(t, b)
	words, _ := m.Words()
	if words[0] != Magic || words[1] != Version16 {
		t.Errorf("header starts %#x %#x, want magic %#x and version %#x", words[0], words[1], Magic, Version16)
	}
	// spirv-val checks that the bound exceeds every id; this checks it is tight.
	if want := uint32(m.next); words[3] != want {
		t.Errorf("bound %d, want %d", words[3], want)
	}
}

func TestInstructionWords(t *testing.T) {
	m := New(Version16)
	cases := []struct {
		name string
		got  []uint32
		want []uint32
	}{
		{"OpCapability Shader", Inst(OpCapability, CapabilityShader), []uint32{2<<16 | 17, 1}},
		{"OpMemoryModel Logical Vulkan", Inst(OpMemoryModel, AddressingLogical, MemoryModelVulkan), []uint32{3<<16 | 14, 0, 3}},
		{"string main", String("main"), []uint32{0x6e69616d, 0}},
		{"string abc", String("abc"), []uint32{0x00636261}},
		{"OpTypeInt 32 0 deduplicated", []uint32{uint32(m.Uint(32))}, []uint32{uint32(m.Type(OpTypeInt, 32, 0))}},
		{"OpConstant deduplicated", []uint32{uint32(m.Uint32(7))}, []uint32{uint32(m.Uint32(7))}},
		{"OpLoopMerge", Inst(OpLoopMerge, 10, 11, LoopControlNone), []uint32{4<<16 | 246, 10, 11, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("got %#x, want %#x", c.got, c.want)
			}
		})
	}
}

func TestConstructionErrors(t *testing.T) {
	cases := []struct {
		name  string
		build func(m *Module)
		want  string
	}{
		{"no memory model", func(m *Module) {}, "no memory model"},
		{"instruction after terminator", func(m *Module) {
			m.MemoryModel(AddressingLogical, MemoryModelGLSL450)
			f := m.Function(m.Void(), m.FuncType(m.Void()))
			f.Op(OpReturn)
			f.Op(OpReturn)
			f.End()
		}, "outside a block"},
		{"unterminated block", func(m *Module) {
			m.MemoryModel(AddressingLogical, MemoryModelGLSL450)
			f := m.Function(m.Void(), m.FuncType(m.Void()))
			f.End()
		}, "no terminator"},
		{"label inside a block", func(m *Module) {
			m.MemoryModel(AddressingLogical, MemoryModelGLSL450)
			f := m.Function(m.Void(), m.FuncType(m.Void()))
			f.Label(m.ID())
		}, "before the previous block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(Version16)
			c.build(m)
			_, err := m.Words()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

package cm2

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gml-dev/gml/internal/spirv"
)

// scalarCoop stands in for the cooperative-matrix instructions with scalar f32
// arithmetic on single elements, so that the rest of the module (interface,
// decorations, push constants, control flow) can be checked by the spirv-val
// Debian ships, which predates SPV_KHR_cooperative_matrix. Both element types use
// f16 storage here (that spirv-val does not know SPV_KHR_bfloat16 either).
type scalarCoop struct{ elem, f32, zero ID }

func (s *scalarCoop) setup(g *gen) ID {
	g.m.Capability(spirv.CapabilityFloat16)
	s.elem, s.f32, s.zero = g.m.Float(16), g.f32, g.m.Float32(0)
	return s.elem
}

func (s *scalarCoop) layout(g *gen, clamp bool, rows, cols, stride ID) ID {
	return g.op(spirv.OpIAdd, g.u32, rows, g.op(spirv.OpIMul, g.u32, cols, stride))
}

func (s *scalarCoop) slice(g *gen, clamp bool, l, r0 ID, rn uint32, c0 ID, cn uint32) ID {
	return g.op(spirv.OpIAdd, g.u32, l, g.op(spirv.OpIAdd, g.u32, r0, c0))
}

func (s *scalarCoop) load(g *gen, use uint32, ptr, sl ID) ID {
	if use == spirv.CoopMatUseAccumulator {
		return g.f.Load(s.f32, ptr)
	}
	return g.op(spirv.OpFConvert, s.f32, g.f.Load(s.elem, ptr))
}

func (s *scalarCoop) mulAdd(g *gen, a, b, c ID) ID {
	return g.op(spirv.OpFAdd, s.f32, g.op(spirv.OpFMul, s.f32, a, b), c)
}

func (s *scalarCoop) addScaled(g *gen, acc, x, k ID) ID {
	return g.op(spirv.OpFAdd, s.f32, acc, g.op(spirv.OpFMul, s.f32, x, k))
}

func (s *scalarCoop) store(g *gen, ptr, v, sl ID) { g.f.Store(ptr, v) }
func (s *scalarCoop) matType(use uint32) ID       { return s.f32 }
func (s *scalarCoop) accType() ID                 { return s.f32 }
func (s *scalarCoop) accZero() ID                 { return s.zero }

var configs = []Config{
	{Elem: "f16", BM: 128, BN: 128, BK: 32, Threads: 256, Unroll: 4},
	{Elem: "bf16", BM: 128, BN: 256, BK: 32, Threads: 256, Unroll: 1},
	{Elem: "f16", BM: 64, BN: 64, BK: 16, Threads: 128, Unroll: 2},
	{Elem: "f16", BM: 128, BN: 256, BK: 32, Threads: 256, Unroll: 2, Prefetch: true, GroupM: 8},
	{Elem: "bf16", BM: 256, BN: 128, BK: 32, Threads: 512, Unroll: 1, Prefetch: true},
}

func TestStubbedModuleValidates(t *testing.T) {
	if _, err := exec.LookPath("spirv-val"); err != nil {
		t.Fatalf("spirv-val is needed (Debian package spirv-tools): %v", err)
	}
	for _, c := range configs {
		t.Run(c.Name(), func(t *testing.T) {
			b, err := generate(c, &scalarCoop{})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "m.spv")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("spirv-val", "--target-env", "vulkan1.3", path).CombinedOutput(); err != nil {
				d, _ := spirv.Dump(b)
				t.Fatalf("spirv-val: %v\n%s\n%s", err, out, d)
			}
		})
	}
}

// module decodes a generated module and indexes its 32-bit constants.
type module struct {
	*spirv.Binary
	consts map[uint32]uint32 // OpConstant id -> value
}

func decode(t *testing.T, b []byte) module {
	t.Helper()
	p, err := spirv.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	m := module{p, map[uint32]uint32{}}
	for _, in := range p.Insts {
		if in.Op == spirv.OpConstant {
			m.consts[in.Operands[1]] = in.Operands[2]
		}
	}
	return m
}

// all returns the operands of every instruction with opcode op.
func (m module) all(op spirv.Op) [][]uint32 {
	var r [][]uint32
	for _, in := range m.Insts {
		if in.Op == op {
			r = append(r, in.Operands)
		}
	}
	return r
}

func TestModuleContents(t *testing.T) {
	for _, c := range configs {
		t.Run(c.Name(), func(t *testing.T) {
			b, err := Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			m := decode(t, b)
			if m.Version != spirv.Version16 {
				t.Errorf("version %#x, want SPIR-V 1.6", m.Version)
			}
			var caps []uint32
			for _, ops := range m.all(spirv.OpCapability) {
				caps = append(caps, ops[0])
			}
			want := []uint32{spirv.CapabilityShader, spirv.CapabilityVulkanMemoryModel, spirv.CapabilityStorageBuffer16BitAccess,
				spirv.CapabilityCooperativeMatrixKHR, spirv.CapabilityCooperativeMatrixTensorAddressingNV, spirv.CapabilityTensorAddressingNV}
			if c.Elem == "bf16" {
				want = append(want, spirv.CapabilityBFloat16TypeKHR, spirv.CapabilityBFloat16CooperativeMatrixKHR)
			} else {
				want = append(want, spirv.CapabilityFloat16)
			}
			if !slices.Equal(caps, want) {
				t.Errorf("capabilities %v, want %v", caps, want)
			}
			if got := m.all(spirv.OpExecutionMode); len(got) != 1 || !slices.Equal(got[0][1:], []uint32{spirv.ExecutionModeLocalSize, c.Threads, 1, 1}) {
				t.Errorf("execution modes %v, want LocalSize %d 1 1", got, c.Threads)
			}
			// Matrix types: component, Workgroup scope, rows, columns, use.
			var shapes [][4]uint32
			for _, ops := range m.all(spirv.OpTypeCooperativeMatrixKHR) {
				if scope := m.consts[ops[2]]; scope != spirv.ScopeWorkgroup {
					t.Errorf("matrix type %d has scope %d, want Workgroup", ops[0], scope)
				}
				shapes = append(shapes, [4]uint32{m.consts[ops[3]], m.consts[ops[4]], m.consts[ops[5]]})
			}
			wantShapes := [][4]uint32{{c.BM, c.BK, spirv.CoopMatUseA}, {c.BK, c.BN, spirv.CoopMatUseB}, {c.BM, c.BN, spirv.CoopMatUseAccumulator}}
			if !slices.Equal(shapes, wantShapes) {
				t.Errorf("matrix shapes %v, want %v", shapes, wantShapes)
			}
			var modes []uint32
			for _, ops := range m.all(spirv.OpTypeTensorLayoutNV) {
				if dim := m.consts[ops[1]]; dim != 2 {
					t.Errorf("tensor layout of %d dimensions, want 2", dim)
				}
				modes = append(modes, m.consts[ops[2]])
			}
			if !slices.Equal(modes, []uint32{spirv.TensorClampUndefined, spirv.TensorClampConstant}) {
				t.Errorf("tensor layout clamp modes %v, want Undefined and Constant", modes)
			}
			// Loads: A and B per step (Unroll steps and a one-step tail unchecked, one
			// step checked; with prefetch, the first slabs before the loops and a last
			// multiply after them) and C once; every load and store without extra operands.
			steps := 1 + 1
			if c.Unroll > 1 {
				steps += int(c.Unroll)
			}
			slabLoads := steps
			if c.Prefetch {
				slabLoads++
				steps++
			}
			loads, stores := m.all(spirv.OpCooperativeMatrixLoadTensorNV), m.all(spirv.OpCooperativeMatrixStoreTensorNV)
			if len(loads) != 2*slabLoads+1 || len(stores) != 1 {
				t.Errorf("%d tensor loads and %d stores, want %d and 1", len(loads), len(stores), 2*slabLoads+1)
			}
			for _, ops := range append(loads, stores...) {
				if tail := ops[len(ops)-2:]; tail[0] != spirv.MemoryAccessNone || tail[1] != spirv.TensorAddressingNone {
					t.Errorf("tensor load/store ends with %v, want memory access None and tensor addressing None", tail)
				}
			}
			if n := len(m.all(spirv.OpCooperativeMatrixMulAddKHR)); n != steps {
				t.Errorf("%d multiply-adds, want %d", n, steps)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	good := configs[0]
	cases := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"element", func(c *Config) { c.Elem = "f32" }, "element type"},
		{"tile", func(c *Config) { c.BK = 24 }, "multiple of 16"},
		{"zero tile", func(c *Config) { c.BM = 0 }, "multiple of 16"},
		{"threads", func(c *Config) { c.Threads = 100 }, "threads"},
		{"unroll", func(c *Config) { c.Unroll = 0 }, "unroll"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			if _, err := Generate(c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

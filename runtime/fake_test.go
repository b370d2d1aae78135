package runtime

import (
	"fmt"
	"math"
	"time"

	"github.com/gml-dev/gml/tensor"
)

// fakeBackend is a host-memory backend for scheduler tests. It runs a handful of F32
// ops and supports exactly the ops in its set, so a test can play a GPU that lacks
// some ops and watch the fallbacks and transfers.
type fakeBackend struct {
	name     string
	ops      map[tensor.Op]bool
	live     map[*fakeBuf]bool
	uploads  int
	prepared int
	released int
}

type fakeBuf struct{ data []byte }

func (b *fakeBuf) Size() int64 { return int64(len(b.data)) }

func newFake(name string, ops ...tensor.Op) *fakeBackend {
	f := &fakeBackend{name: name, ops: map[tensor.Op]bool{}, live: map[*fakeBuf]bool{}}
	for _, o := range ops {
		f.ops[o] = true
	}
	return f
}

func (f *fakeBackend) Name() string { return f.name }
func (f *fakeBackend) Info() DeviceInfo {
	return DeviceInfo{Backend: f.name, Name: "fake " + f.name, Kind: "cpu"}
}
func (f *fakeBackend) Supports(n *tensor.Node) bool {
	return f.ops[n.Op()] && n.DType() == tensor.F32
}
func (f *fakeBackend) Alloc(bytes int64, pool Pool) (Buffer, error) {
	if bytes > 1<<30 {
		return nil, fmt.Errorf("fake: out of memory: asked %d bytes", bytes)
	}
	b := &fakeBuf{data: make([]byte, bytes)}
	f.live[b] = true
	return b, nil
}
func (f *fakeBackend) Free(b Buffer) {
	if !f.live[b.(*fakeBuf)] {
		panic("fake: double free")
	}
	delete(f.live, b.(*fakeBuf))
}
func (f *fakeBackend) Upload(b Buffer, src []byte) error {
	f.uploads++
	copy(b.(*fakeBuf).data, src)
	return nil
}
func (f *fakeBackend) Download(b Buffer, dst []byte) error {
	copy(dst, b.(*fakeBuf).data)
	return nil
}
func (f *fakeBackend) Close() error { return nil }

type fakeProgram struct {
	f     *fakeBackend
	steps []func()
	nodes []*tensor.Node
}

func (p *fakeProgram) Run(prof *Profile) error {
	for i, s := range p.steps {
		s()
		if prof != nil {
			prof.Record(p.nodes[i], time.Microsecond)
		}
	}
	return nil
}
func (p *fakeProgram) Release() { p.f.released++ }

func f32(b Buffer) []float32 {
	d := b.(*fakeBuf).data
	out := make([]float32, len(d)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(d[4*i]) | uint32(d[4*i+1])<<8 | uint32(d[4*i+2])<<16 | uint32(d[4*i+3])<<24)
	}
	return out
}

func setF32(b Buffer, v []float32) {
	d := b.(*fakeBuf).data
	for i, x := range v {
		u := math.Float32bits(x)
		d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
}

// Prepare supports same-shape Add and Mul, Relu, Neg, Reshape (a no-op: aliased) and
// Assign; that is enough to exercise every scheduler pass.
func (f *fakeBackend) Prepare(seg *Segment) (Program, error) {
	f.prepared++
	p := &fakeProgram{f: f}
	for _, n := range seg.Nodes {
		if !f.Supports(n) {
			return nil, fmt.Errorf("fake %s: unsupported %v", f.name, n)
		}
		out := seg.Buffers[n]
		ins := make([]Buffer, len(n.Inputs()))
		for i, in := range n.Inputs() {
			ins[i] = seg.Buffers[in]
			if ins[i] == nil {
				return nil, fmt.Errorf("fake %s: no buffer for input %v of %v", f.name, in, n)
			}
		}
		var step func()
		switch n.Op() {
		case tensor.OpAdd, tensor.OpMul:
			mul := n.Op() == tensor.OpMul
			step = func() {
				a, b := f32(ins[0]), f32(ins[1])
				o := make([]float32, len(a))
				for i := range a {
					if mul {
						o[i] = a[i] * b[i]
					} else {
						o[i] = a[i] + b[i]
					}
				}
				setF32(out, o)
			}
		case tensor.OpRelu, tensor.OpNeg:
			neg := n.Op() == tensor.OpNeg
			step = func() {
				a := f32(ins[0])
				for i := range a {
					if neg {
						a[i] = -a[i]
					} else {
						a[i] = max(a[i], 0)
					}
				}
				setF32(out, a)
			}
		case tensor.OpReshape:
			if out != ins[0] {
				return nil, fmt.Errorf("fake: reshape %v not aliased", n)
			}
			step = func() {}
		case tensor.OpAssign:
			step = func() { setF32(out, f32(ins[1])) }
		}
		p.steps = append(p.steps, step)
		p.nodes = append(p.nodes, n)
	}
	return p, nil
}

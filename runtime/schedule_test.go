package runtime

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// Tests of the scheduler's passes, each on its own. They share one graph on a fake
// GPU that lacks Relu, so the schedule splits into GPU, CPU and GPU segments:
//
//	x (input), w (variable), k (const)
//	a = Add(x, w)        gpu, segment 0
//	v = Reshape(a)       gpu, segment 0: a view of a
//	r = Relu(v)          cpu, segment 1: a fallback
//	b = Reshape(r)       gpu, segment 2 (the GPU supports Reshape)
//	c = Neg(a)           gpu, segment 2
//	d = Mul(c, b)        gpu, segment 2: b comes back from the CPU
//	e = Add(d, x)        gpu, segment 2
//	f = Mul(e, k)        gpu, segment 2
type schedFixture struct {
	cpu, gpu                     *fakeBackend
	x, w, k, a, v, r, b, c, d, e *tensor.Node
	f                            *tensor.Node
	nodes                        []*tensor.Node
	homes                        map[*tensor.Variable]Backend
	on                           map[*tensor.Node]Backend
	fallbacks                    []*tensor.Node
	segs                         []segmentPlan
}

func newSchedFixture(t *testing.T) *schedFixture {
	t.Helper()
	f := &schedFixture{cpu: newFake("cpu", allFake...), gpu: newFake("gpu", tensor.OpAdd, tensor.OpMul, tensor.OpNeg, tensor.OpReshape, tensor.OpAssign)}
	g := tensor.NewGraph()
	f.x = g.Input("x", tensor.F32, 4)
	f.w = g.Var(tensor.NewVariable("w", vec(1, 2, 3, 4)))
	f.k = g.Const(vec(2, 2, 2, 2))
	f.a = tensor.Add(f.x, f.w)
	f.v = tensor.Reshape(f.a, 2, 2)
	f.r = tensor.Relu(f.v)
	f.b = tensor.Reshape(f.r, 4)
	f.c = tensor.Neg(f.a)
	f.d = tensor.Mul(f.c, f.b)
	f.e = tensor.Add(f.d, f.x)
	f.f = tensor.Mul(f.e, f.k)
	var err error
	if f.nodes, err = collect([]*tensor.Node{f.f}); err != nil {
		t.Fatal(err)
	}
	if f.homes, err = variableHomes(f.nodes, nil, f.gpu, f.cpu); err != nil {
		t.Fatal(err)
	}
	f.on, f.fallbacks = assign(f.nodes, f.gpu, f.cpu, f.homes)
	f.segs = segment(f.nodes, f.on)
	return f
}

func TestCollectOrdersWritesAfterReads(t *testing.T) {
	g := tensor.NewGraph()
	v := g.Var(tensor.NewVariable("v", vec(1)))
	upd := tensor.Apply(tensor.OpAssign, nil, v, tensor.Neg(v))
	late := tensor.Relu(v) // built after the update but reads the old value
	nodes, err := collect([]*tensor.Node{upd, late})
	if err != nil {
		t.Fatal(err)
	}
	if nodes[len(nodes)-1] != upd {
		t.Errorf("the assign is not last: %v", nodes)
	}
}

func TestVariableHomes(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	gpu := newFake("gpu", tensor.OpAdd) // cannot run Assign
	g := tensor.NewGraph()
	kept := tensor.NewVariable("kept", vec(1))
	written := tensor.NewVariable("written", vec(1))
	kv, wv := g.Var(kept), g.Var(written)
	upd := tensor.Assign(wv, tensor.Add(wv, kv))
	nodes, err := collect([]*tensor.Node{upd})
	if err != nil {
		t.Fatal(err)
	}
	homes, err := variableHomes(nodes, nil, gpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	if homes[kept] != Backend(gpu) || homes[written] != Backend(cpu) {
		t.Errorf("homes: kept on %s, written on %s; want gpu (preferred) and cpu (gpu cannot assign)", homes[kept].Name(), homes[written].Name())
	}
	// A variable resident on a device that cannot run its writer is an error, not a move.
	resident := map[*tensor.Variable]*resident{written: {backend: gpu}}
	if _, err := variableHomes(nodes, resident, gpu, cpu); err == nil {
		t.Error("a resident variable whose writer its home cannot run was accepted")
	}
}

func TestAssignAndSegment(t *testing.T) {
	f := newSchedFixture(t)
	want := map[*tensor.Node]Backend{f.a: f.gpu, f.v: f.gpu, f.r: f.cpu, f.b: f.gpu, f.c: f.gpu, f.d: f.gpu, f.e: f.gpu, f.f: f.gpu}
	for n, b := range want {
		if f.on[n] != b {
			t.Errorf("%v on %s, want %s", n, f.on[n].Name(), b.Name())
		}
	}
	if len(f.fallbacks) != 1 || f.fallbacks[0] != f.r {
		t.Errorf("fallbacks %v, want relu", f.fallbacks)
	}
	var got []string
	for _, s := range f.segs {
		got = append(got, s.backend.Name())
	}
	if len(got) != 3 || got[0] != "gpu" || got[1] != "cpu" || got[2] != "gpu" {
		t.Errorf("segments on %v, want gpu, cpu, gpu", got)
	}
	for _, s := range f.segs {
		for _, n := range s.nodes {
			if isSource(n) {
				t.Errorf("source %v in a segment", n)
			}
		}
	}
}

func TestLiveness(t *testing.T) {
	f := newSchedFixture(t)
	l := liveness(f.segs, f.on, aliases{}, map[*tensor.Node]bool{f.f: true})
	// a is read through its view v on the CPU: pinned; r is read on the GPU: pinned;
	// the fetched output is pinned.
	for _, n := range []*tensor.Node{f.a, f.r, f.f} {
		if !l.pinned[n] {
			t.Errorf("%v is not pinned", n)
		}
	}
	// c is last read by d, d by e, both in segment 2 on the GPU.
	if p := l.last[f.c]; p.seg != 2 || f.segs[2].nodes[p.idx] != f.d {
		t.Errorf("c's last reader is at %+v, want d", p)
	}
	if p := l.last[f.d]; f.segs[p.seg].nodes[p.idx] != f.e {
		t.Errorf("d's last reader is at %+v, want e", p)
	}
	if !l.releasable(f.c) || l.releasable(f.a) || l.releasable(f.x) || l.releasable(f.w) {
		t.Error("releasable: want c only among c, a, x and w")
	}
}

func TestRoutes(t *testing.T) {
	f := newSchedFixture(t)
	rts := routes(f.segs, f.on, aliases{}, f.homes)
	type key struct {
		node *tensor.Node
		to   string
		seg  int
		kind routeKind
		from string
	}
	var got []key
	for _, r := range rts {
		from := ""
		if r.from != nil {
			from = r.from.Name()
		}
		got = append(got, key{r.node, r.to.Name(), r.seg, r.kind, from})
	}
	want := []key{
		{f.x, "gpu", 0, routeFeed, ""},
		{f.w, "gpu", 0, routeVariable, ""},
		{f.v, "cpu", 1, routeTransfer, "gpu"}, // the view is copied, not recomputed
		{f.r, "gpu", 2, routeTransfer, "cpu"},
		{f.k, "gpu", 2, routeConst, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("routes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// x is read again in segment 2 on the GPU: its upload in segment 0 serves it.
	for _, r := range rts[1:] {
		if r.node == f.x {
			t.Errorf("x routed twice to the GPU: %+v", r)
		}
	}
}

// TestRoutesVariableAwayFromHome: a variable read on a backend other than its home is
// made available at home first, then copied.
func TestRoutesVariableAwayFromHome(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	gpu := newFake("gpu", tensor.OpNeg)
	g := tensor.NewGraph()
	w := g.Var(tensor.NewVariable("w", vec(1)))
	y := tensor.Relu(tensor.Neg(w))
	nodes, _ := collect([]*tensor.Node{y})
	homes := map[*tensor.Variable]Backend{w.Variable(): cpu}
	on, _ := assign(nodes, gpu, cpu, homes)
	rts := routes(segment(nodes, on), on, aliases{}, homes)
	if len(rts) < 2 || rts[0].kind != routeVariable || rts[0].to != Backend(cpu) || rts[1].kind != routeTransfer || rts[1].from != Backend(cpu) || rts[1].to != Backend(gpu) {
		t.Errorf("routes %+v, want w at home on the cpu, then copied to the gpu", rts)
	}
}

func TestAllocate(t *testing.T) {
	f := newSchedFixture(t)
	r := newRuntime(f.gpu, f.cpu)
	keep := map[*tensor.Node]bool{f.f: true}
	p, err := allocate(r, f.segs, routes(f.segs, f.on, aliases{}, f.homes), aliases{}, liveness(f.segs, f.on, aliases{}, keep), keep)
	if err != nil {
		t.Fatal(err)
	}
	buf := func(n *tensor.Node, b Backend) Buffer { return p.bufs[valueKey{n, b}] }
	if buf(f.v, f.gpu) != buf(f.a, f.gpu) {
		t.Error("the reshape does not alias its input")
	}
	// c's buffer is released after d reads it, so e (same size, later) takes it; a,
	// which the CPU reads through v, keeps its own.
	if buf(f.e, f.gpu) != buf(f.c, f.gpu) {
		t.Error("e did not reuse c's buffer, freed after its last reader")
	}
	for _, n := range []*tensor.Node{f.c, f.d, f.e, f.f} {
		if buf(n, f.gpu) == buf(f.a, f.gpu) {
			t.Errorf("%v reuses the buffer of a, which a transfer reads", n)
		}
	}
	// Transfers land in buffers of their own, before their segment (b views r's).
	if len(p.pre[1]) != 1 || p.pre[1][0].node != f.v || len(p.pre[2]) != 1 || p.pre[2][0].node != f.r {
		t.Errorf("transfers %+v, want v before segment 1 and r before segment 2", p.pre)
	}
	for _, n := range []*tensor.Node{f.c, f.d, f.e, f.f} {
		if buf(n, f.gpu) == p.pre[2][0].dst {
			t.Errorf("%v shares the transfer's buffer", n)
		}
	}
	if len(p.feeds[f.x]) != 1 || len(p.consts[f.k]) != 1 || p.variables[f.w.Variable()] == nil {
		t.Errorf("feeds %v, consts %v, variables %v", p.feeds, p.consts, p.variables)
	}
	if f.gpu.uploads != 2 { // the constant, and the variable's initial value
		t.Errorf("%d uploads to the gpu while allocating, want 2", f.gpu.uploads)
	}
}

package cpu_test

import (
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/tensor"
)

func TestBuffers(t *testing.T) {
	be := cpu.New()
	defer be.Close()
	for _, size := range []int64{0, 1, 63, 4096} {
		b, err := be.Alloc(size, runtime.PoolScratch)
		if err != nil {
			t.Fatal(err)
		}
		if b.Size() != size {
			t.Errorf("Alloc(%d) gave %d bytes", size, b.Size())
		}
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i)
		}
		if err := be.Upload(b, src); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, size)
		if err := be.Download(b, dst); err != nil || string(dst) != string(src) {
			t.Errorf("round trip of %d bytes: %v", size, err)
		}
		if be.Used(runtime.PoolScratch) != size {
			t.Errorf("scratch pool counts %d bytes, want %d", be.Used(runtime.PoolScratch), size)
		}
		be.Free(b)
	}
	if be.Used(runtime.PoolScratch) != 0 {
		t.Errorf("%d bytes still counted after Free", be.Used(runtime.PoolScratch))
	}
	b, _ := be.Alloc(8, runtime.PoolIO)
	errs := []error{
		be.Upload(b, make([]byte, 9)),
		be.Download(b, make([]byte, 9)),
		func() error { _, err := be.Alloc(-1, runtime.PoolIO); return err }(),
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
		}
	}
}

func TestPrepareErrors(t *testing.T) {
	be := cpu.New()
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4)
	y := tensor.Neg(x)
	small, _ := be.Alloc(8, runtime.PoolActivations)
	full, _ := be.Alloc(16, runtime.PoolActivations)
	cases := []struct {
		bufs map[*tensor.Node]runtime.Buffer
		want string
	}{
		{map[*tensor.Node]runtime.Buffer{y: full}, "no buffer for #0"},
		{map[*tensor.Node]runtime.Buffer{x: full, y: small}, "too small"},
	}
	for _, c := range cases {
		_, err := be.Prepare(&runtime.Segment{Nodes: []*tensor.Node{y}, Buffers: c.bufs})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Prepare error %v, want %q", err, c.want)
		}
	}
	be.Close()
	if _, err := be.Alloc(4, runtime.PoolIO); err == nil {
		t.Error("Alloc after Close succeeded")
	}
}

package apitest

import (
	"bytes"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestBuffers: every buffer call on every device, and between devices.
func TestBuffers(t *testing.T) {
	devs := devices(t)
	for _, d := range devs {
		t.Run(d.ID(), func(t *testing.T) {
			b, err := d.Alloc(40, rt.UsageWeights)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Free()
			if b.Size() != 40 || b.Usage() != rt.UsageWeights || b.Device() != d {
				t.Errorf("buffer %v: size %d, usage %v, device %v", b, b.Size(), b.Usage(), b.Device())
			}
			if want := d.Type() == rt.CPU || d.Type() == rt.SoftwareGPU || d.Type() == rt.IntegratedGPU; b.HostVisible() != want {
				t.Errorf("HostVisible() = %v on %v", b.HostVisible(), d)
			}
			zero := make([]byte, 40)
			got := make([]byte, 40)
			if err := b.Read(0, got); err != nil || !bytes.Equal(got, zero) {
				t.Errorf("new buffer reads %v, %v; want zeros", got, err)
			}
			x := random(4, 10)
			if err := b.Set(x); err != nil {
				t.Fatal(err)
			}
			back, err := b.Tensor(tensor.F32, 10)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, "Set then Tensor", back, x, 0)
			if err := b.Write(6, []byte{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			part := make([]byte, 5)
			if err := b.Read(5, part); err != nil || !bytes.Equal(part[1:4], []byte{1, 2, 3}) || part[0] != x.Bytes()[5] || part[4] != x.Bytes()[9] {
				t.Errorf("Write(6) then Read(5) = %v, %v", part, err)
			}
			if err := b.Write(38, []byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "overruns") {
				t.Errorf("Write past the end: %v", err)
			}
			for _, c := range []struct {
				dt    tensor.DType
				v     float64
				shape []int
			}{{tensor.F32, 2.5, []int{10}}, {tensor.F16, -1.5, []int{20}}, {tensor.BF16, 3, []int{20}}, {tensor.I32, -7, []int{10}}, {tensor.I64, 1 << 40, []int{5}}, {tensor.Bool, 1, []int{40}}} {
				if err := b.Fill(c.dt, c.v); err != nil {
					t.Fatalf("Fill(%v, %g): %v", c.dt, c.v, err)
				}
				got, err := b.Tensor(c.dt, c.shape...)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < got.Len(); i++ {
					if got.Float(i) != c.v {
						t.Fatalf("Fill(%v, %g): element %d is %g", c.dt, c.v, i, got.Float(i))
					}
				}
			}
			if err := b.Clear(0xAB); err != nil {
				t.Fatal(err)
			}
			if err := b.Read(0, got); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{0xAB}, 40)) {
				t.Errorf("Clear(0xAB) reads %v, %v", got, err)
			}
			// Odd sizes: the tail past the last whole word is filled too.
			odd, err := d.Alloc(7, rt.UsageAny)
			if err != nil {
				t.Fatal(err)
			}
			defer odd.Free()
			if err := odd.Clear(9); err != nil {
				t.Fatal(err)
			}
			o := make([]byte, 7)
			if err := odd.Read(0, o); err != nil || !bytes.Equal(o, bytes.Repeat([]byte{9}, 7)) {
				t.Errorf("Clear of 7 bytes reads %v, %v", o, err)
			}
			// Copies to a buffer of every device, this one included.
			if err := b.Set(x); err != nil {
				t.Fatal(err)
			}
			for _, e := range devs {
				dst, err := e.Alloc(48, rt.UsageCompute)
				if err != nil {
					t.Fatal(err)
				}
				if err := b.CopyTo(dst); err != nil {
					t.Fatalf("CopyTo %v: %v", e, err)
				}
				back, err := dst.Tensor(tensor.F32, 10)
				if err != nil {
					t.Fatal(err)
				}
				closeTo(t, "CopyTo "+e.ID(), back, x, 0)
				if err := dst.CopyTo(b); err == nil || !strings.Contains(err.Error(), "smaller") {
					t.Errorf("CopyTo a smaller buffer: %v", err)
				}
				dst.Free()
			}
		})
	}
}

// TestBufferGroupAndFree: a group frees its buffers together; every call on a freed
// buffer is an error wrapping ErrFreed; Free twice is harmless.
func TestBufferGroupAndFree(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		g := rt.NewBufferGroup()
		var bufs []*rt.DeviceBuffer
		for i, usage := range []rt.Usage{rt.UsageWeights, rt.UsageCompute, rt.UsageAny} {
			b, err := g.Alloc(d, int64(1024*(i+1)), usage)
			if err != nil {
				t.Fatal(err)
			}
			bufs = append(bufs, b)
		}
		bufs[1].Free() // freed on its own first: the group skips it
		if g.Size() != 1024+3072 || len(g.Buffers()) != 3 || !strings.Contains(g.String(), "3 buffers") {
			t.Errorf("group: size %d, %d buffers, %q", g.Size(), len(g.Buffers()), g)
		}
		g.Free()
		g.Free()
		if len(g.Buffers()) != 0 {
			t.Errorf("group holds %d buffers after Free", len(g.Buffers()))
		}
		for _, b := range bufs {
			if !b.Freed() || !strings.Contains(b.String(), "freed") {
				t.Errorf("%v not freed by the group", b)
			}
			calls := map[string]error{
				"Read":   b.Read(0, make([]byte, 4)),
				"Write":  b.Write(0, make([]byte, 4)),
				"Fill":   b.Fill(tensor.F32, 1),
				"Clear":  b.Clear(0),
				"CopyTo": b.CopyTo(b),
			}
			_, calls["Tensor"] = b.Tensor(tensor.F32, 1)
			_, calls["WriteAsync"] = b.WriteAsync(0, make([]byte, 4))
			_, calls["ReadAsync"] = b.ReadAsync(0, make([]byte, 4))
			other, _ := d.Alloc(4096, rt.UsageAny)
			_, calls["CopyToAsync"] = b.CopyToAsync(other)
			calls["CopyTo other"] = b.CopyTo(other)
			other.Free()
			for name, err := range calls {
				if name == "CopyTo" {
					continue // a buffer copied onto itself is a no-op
				}
				if !errors.Is(err, rt.ErrFreed) {
					t.Errorf("%s after Free: %v; want an error wrapping ErrFreed", name, err)
				}
			}
		}
	})
}

// TestBuffersFreedWhenCollected: a buffer nobody references is freed by the collector.
func TestBuffersFreedWhenCollected(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		b, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		used, ok := b.(interface{ Used(rt.Pool) int64 })
		if !ok {
			t.Skipf("%v does not report its pools", d)
		}
		before := used.Used(rt.PoolScratch)
		func() {
			var held []*rt.DeviceBuffer // referenced until counted: a collection may come at any time
			for range 4 {
				buf, err := d.Alloc(1<<20, rt.UsageAny)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, buf)
			}
			if used.Used(rt.PoolScratch) < before+4<<20 {
				t.Fatalf("scratch pool %d after allocating 4 MiB from %d", used.Used(rt.PoolScratch), before)
			}
			goruntime.KeepAlive(held)
		}()
		eventually(t, "dropped buffers freed", func() bool { return used.Used(rt.PoolScratch) <= before })
	})
}

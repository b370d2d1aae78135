package apitest

import (
	"bytes"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestAsyncTransfers: asynchronous uploads, downloads and copies give their events;
// the data is right once the events complete, and calls on a buffer wait for the
// transfers in flight on it.
func TestAsyncTransfers(t *testing.T) {
	devs := devices(t)
	for _, d := range devs {
		t.Run(d.ID(), func(t *testing.T) {
			const n = 3 << 20
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i * 7)
			}
			a, err := d.Alloc(n, rt.UsageAny)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			up, err := a.WriteAsync(0, src)
			if err != nil {
				t.Fatal(err)
			}
			if up.Kind() != "upload" || up.Device() != d.ID() {
				t.Errorf("upload event: %v", up)
			}
			src[0] ^= 0xFF // the caller may reuse its bytes at once
			if err := up.Synchronize(); err != nil || !up.Done() || up.Err() != nil {
				t.Fatalf("upload: %v, done %v", err, up.Done())
			}
			if s, e, ok := up.Span(); !ok || e.Before(s) {
				t.Errorf("upload span %v-%v, %v", s, e, ok)
			}
			src[0] ^= 0xFF
			got := make([]byte, n)
			down, err := a.ReadAsync(0, got)
			if err != nil {
				t.Fatal(err)
			}
			if err := down.Synchronize(); err != nil || !bytes.Equal(got, src) {
				t.Fatalf("download after upload: %v, equal %v", err, bytes.Equal(got, src))
			}
			// A read right after an asynchronous write waits for it.
			if _, err := a.WriteAsync(100, []byte{9, 9, 9}); err != nil {
				t.Fatal(err)
			}
			three := make([]byte, 3)
			if err := a.Read(100, three); err != nil || !bytes.Equal(three, []byte{9, 9, 9}) {
				t.Errorf("Read after WriteAsync: %v, %v", three, err)
			}
			copy(src[100:], []byte{9, 9, 9})
			for _, e := range devs {
				b, err := e.Alloc(n, rt.UsageAny)
				if err != nil {
					t.Fatal(err)
				}
				ev, err := a.CopyToAsync(b)
				if err != nil {
					t.Fatal(err)
				}
				if err := ev.Synchronize(); err != nil {
					t.Fatal(err)
				}
				back := make([]byte, n)
				if err := b.Read(0, back); err != nil || !bytes.Equal(back, src) {
					t.Errorf("CopyToAsync to %v: %v, equal %v", e, err, bytes.Equal(back, src))
				}
				b.Free()
			}
			if _, err := a.ReadAsync(n-1, make([]byte, 2)); err == nil || !strings.Contains(err.Error(), "overruns") {
				t.Errorf("ReadAsync past the end: %v", err)
			}
		})
	}
}

// TestEvents: Record, Wait and Synchronize on every device; a buffer freed while its
// transfer is in flight waits for it.
func TestEvents(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		a, err := d.Alloc(8<<20, rt.UsageAny)
		if err != nil {
			t.Fatal(err)
		}
		data := bytes.Repeat([]byte{1, 2, 3, 4}, 2<<20)
		up, err := a.WriteAsync(0, data)
		if err != nil {
			t.Fatal(err)
		}
		mark, err := d.Record()
		if err != nil {
			t.Fatal(err)
		}
		if mark.Kind() != "record" {
			t.Errorf("Record gave %v", mark)
		}
		if err := d.Wait(mark); err != nil {
			t.Fatal(err)
		}
		if !up.Done() {
			t.Errorf("the upload is not done after waiting for a later recorded event")
		}
		if err := d.Synchronize(); err != nil {
			t.Fatal(err)
		}
		// Free with a download in flight: the download completes first, its data intact.
		got := make([]byte, 8<<20)
		down, err := a.ReadAsync(0, got)
		if err != nil {
			t.Fatal(err)
		}
		a.Free()
		if err := down.Synchronize(); err != nil || !bytes.Equal(got, data) {
			t.Errorf("download across Free: %v, equal %v", err, bytes.Equal(got, data))
		}
		if !strings.Contains(down.String(), "download 8.0 MiB on "+d.ID()) {
			t.Errorf("event string %q", down)
		}
	})
}

// TestTimeline records transfers and a computation and reports them on lanes; on a
// device whose transfers run on a queue of their own, an upload overlaps a compute.
func TestTimeline(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		r := runtimeOn(t, d)
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 256, 256)
		y := tensor.MatMul(x, x)
		for range 4 {
			y = tensor.MatMul(y, x)
		}
		exe, err := r.Compile([]*tensor.Node{y})
		if err != nil {
			t.Fatal(err)
		}
		defer exe.Free()
		buf, err := d.AllocTensor(tensor.F32, rt.UsageCompute, 256, 256)
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Free()
		tl := rt.StartTimeline()
		next, err := d.AllocTensor(tensor.F32, rt.UsageCompute, 1024, 1024)
		if err != nil {
			t.Fatal(err)
		}
		defer next.Free()
		if err := buf.Set(random(5, 256, 256)); err != nil {
			t.Fatal(err)
		}
		if err := exe.Bind(x, buf); err != nil {
			t.Fatal(err)
		}
		up, err := next.WriteAsync(0, random(6, 1024, 1024).Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if err := exe.Compute(); err != nil {
			t.Fatal(err)
		}
		if err := up.Synchronize(); err != nil {
			t.Fatal(err)
		}
		tl.Stop()
		spans := tl.Spans()
		var lanes []string
		for _, s := range spans {
			lanes = append(lanes, s.Lane+": "+s.Label)
		}
		joined := strings.Join(lanes, "\n")
		for _, want := range []string{d.ID() + " transfer: upload 4.0 MiB", d.ID() + " compute: compute matmul", d.ID() + " transfer: copy x 256.0 KiB"} {
			if !strings.Contains(joined, want) {
				t.Errorf("timeline lacks %q:\n%s", want, joined)
			}
		}
		if tl.Busy("compute") <= 0 || tl.Busy("transfer") <= 0 {
			t.Errorf("busy compute %v, transfer %v", tl.Busy("compute"), tl.Busy("transfer"))
		}
		if ov := tl.Overlap("transfer", "compute"); ov < 0 || ov > tl.Busy("compute") {
			t.Errorf("overlap %v outside [0, %v]", ov, tl.Busy("compute"))
		}
		svg, _ := tl.MIMEBundle()["image/svg+xml"].(string)
		if !strings.Contains(svg, "<svg") || !strings.Contains(svg, d.ID()+" compute") {
			t.Errorf("timeline SVG lacks its lanes")
		}
		t.Logf("%v", tl)
	})
}

package apitest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestRegistry: every device is found by its index, its ID, part of its name and its
// type; "best" never picks a software GPU; unknown names fail naming what exists.
func TestRegistry(t *testing.T) {
	list := rt.Devices()
	if len(list.Devices) == 0 {
		t.Fatalf("no devices: %v", list.Errors)
	}
	for i, d := range list.Devices {
		if d.Index() != i {
			t.Errorf("device %d has index %d", i, d.Index())
		}
		for _, q := range []string{fmt.Sprint(i), d.ID(), strings.ToUpper(d.ID())} {
			got, err := rt.FindDevice(q)
			if err != nil || got != d {
				t.Errorf("FindDevice(%q) = %v, %v; want %v", q, got, err, d)
			}
		}
		if got, err := rt.DeviceAt(i); err != nil || got != d {
			t.Errorf("DeviceAt(%d) = %v, %v", i, got, err)
		}
		byName, err := rt.FindDevice(strings.Fields(d.Name())[0])
		if err != nil || byName.Type() != d.Type() && !strings.Contains(byName.Name(), strings.Fields(d.Name())[0]) {
			t.Errorf("FindDevice(first word of %q) = %v, %v", d.Name(), byName, err)
		}
		byType, err := rt.FindDevice(string(d.Type()))
		if err != nil || byType.Type() != d.Type() {
			t.Errorf("FindDevice(%q) = %v, %v", d.Type(), byType, err)
		}
	}
	cpu, err := rt.FindDevice("cpu")
	if err != nil || cpu.Type() != rt.CPU || cpu.ID() != "cpu" {
		t.Fatalf("FindDevice(cpu) = %v, %v", cpu, err)
	}
	best, err := rt.BestDevice()
	if err != nil || best.Type() == rt.SoftwareGPU {
		t.Errorf("BestDevice() = %v, %v: want a real GPU or the CPU", best, err)
	}
	if auto, err := rt.FindDevice("auto"); err != nil || auto != best {
		t.Errorf("FindDevice(auto) = %v, %v; want %v", auto, err, best)
	}
	if _, err := rt.FindDevice("tpu"); err == nil || !strings.Contains(err.Error(), `unknown device "tpu"`) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("FindDevice(tpu): %v", err)
	}
	if _, err := rt.DeviceAt(len(list.Devices)); err == nil {
		t.Errorf("DeviceAt past the end: no error")
	}
	if _, err := rt.New(rt.Device("no-such-device")); err == nil || !strings.Contains(err.Error(), "no-such-device") {
		t.Errorf("New(Device(no-such-device)): %v", err)
	}
	if g := vulkan(t); g != nil {
		if !g.Type().IsGPU() || !strings.HasPrefix(g.ID(), "vulkan:") {
			t.Errorf("the Vulkan device is %v", g)
		}
		if byGPU, err := rt.FindDevice("gpu"); err != nil || byGPU != g {
			t.Errorf("FindDevice(gpu) = %v, %v; want %v", byGPU, err, g)
		}
		r := runtimeOn(t, g)
		if r.Backend() != "vulkan" {
			t.Errorf("New(Device(%q)) runs on %s", g.ID(), r.Backend())
		}
	}
	text := list.String()
	for _, d := range list.Devices {
		if !strings.Contains(text, d.ID()) {
			t.Errorf("device table lacks %s:\n%s", d.ID(), text)
		}
	}
	if _, ok := list.MIMEBundle()["text/html"]; !ok {
		t.Errorf("device table has no HTML")
	}
}

// TestDeviceDescription: memory, abilities and the description of every device.
func TestDeviceDescription(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		free, total, err := d.Memory()
		if err != nil || total <= 0 || free < 0 || free > total {
			t.Errorf("Memory() = %d free, %d total, %v", free, total, err)
		}
		ab, err := d.Abilities()
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"fill", "copy", "ranged-io", "host-visible", "memory-info"} {
			if !slices.Contains(ab, want) {
				t.Errorf("abilities %v lack %s", ab, want)
			}
		}
		if d.Type().IsGPU() {
			for _, want := range []string{"async-transfer", "events", "explains-support"} {
				if !slices.Contains(ab, want) {
					t.Errorf("abilities %v lack %s", ab, want)
				}
			}
		}
		html, _ := d.MIMEBundle()["text/html"].(string)
		for _, want := range []string{d.ID(), d.Name(), "abilities", "free"} {
			if !strings.Contains(html, want) {
				t.Errorf("description lacks %q: %s", want, html)
			}
		}
	})
}

// TestSupports asks each device about ops on given dtypes and shapes.
func TestSupports(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		g := tensor.NewGraph()
		a, b := g.Input("a", tensor.F32, 4, 8), g.Input("b", tensor.F32, 8, 3)
		if s := d.Supports(tensor.MatMul(a, b)); !s.OK || s.How != "kernel" {
			t.Errorf("f32 matmul: %v", s)
		}
		s := d.SupportsOp(tensor.OpMatMul, tensor.MatMulAttr{}, rt.Operand{DType: tensor.F32, Shape: tensor.Shape{4, 8}}, rt.Operand{DType: tensor.F32, Shape: tensor.Shape{7, 3}})
		if s.OK || !strings.Contains(s.Reason, "matmul") {
			t.Errorf("matmul of mismatched shapes: %v", s)
		}
		h := g.Input("h", tensor.F16, 4, 8)
		s = d.Supports(tensor.Exp(h))
		if d.Type() == rt.CPU && !s.OK {
			t.Errorf("f16 exp on the CPU: %v", s)
		}
		if d.Type().IsGPU() && (s.OK || !strings.Contains(s.Reason, "f32")) {
			t.Errorf("f16 exp on the GPU: %v; want unsupported, saying the shader computes f32", s)
		}
		if !strings.Contains(s.String(), d.ID()) {
			t.Errorf("Support.String() = %q", s)
		}
	})
}

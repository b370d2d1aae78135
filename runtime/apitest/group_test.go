package apitest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestDeviceGroupOfOneGPU lists the Vulkan device twice (GML_VK_DEVICES=0,0, in a
// process of its own since the registry lists devices once): two devices with IDs of
// their own, each opened with its own instance, pools and queues; a meta device over
// them trains data parallel like one device, its replicas identical after every step,
// and a pipeline over them infers like one device; every device then shuts down cleanly.
func TestDeviceGroupOfOneGPU(t *testing.T) {
	if os.Getenv("GML_APITEST_GROUP") == "" {
		if vulkan(t) == nil {
			t.Skip("no Vulkan device")
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestDeviceGroupOfOneGPU$", "-test.v")
		cmd.Env = append(os.Environ(), "GML_APITEST_GROUP=1", "GML_VK_DEVICES=0,0")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDeviceGroupOfOneGPU")) {
			t.Fatalf("GML_VK_DEVICES=0,0: %v\n%s", err, out)
		}
		t.Logf("%s", out)
		return
	}
	// Registered first, run last: every device closes cleanly after the work below, and
	// the process then exits without a crash (the parent checks its status).
	t.Cleanup(func() {
		if err := rt.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	var group []*rt.PhysicalDevice
	for _, d := range rt.Devices().Devices {
		if d.Info().Backend == "vulkan" {
			group = append(group, d)
		}
	}
	if len(group) != 2 || group[0].ID() != "vulkan:0" || group[1].ID() != "vulkan:0#2" || group[0].Name() != group[1].Name() {
		t.Fatalf("GML_VK_DEVICES=0,0 lists %v", group)
	}
	b0, err := group[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	b1, err := group[1].Open()
	if err != nil {
		t.Fatal(err)
	}
	if b0 == b1 {
		t.Fatalf("the two listings of device 0 share one backend")
	}
	if d, err := rt.FindDevice("vulkan:0#2"); err != nil || d != group[1] {
		t.Fatalf("FindDevice(vulkan:0#2) = %v, %v", d, err)
	}
	_, px, py, _, _, _ := mlp(16)
	pfeeds := map[*tensor.Node]*tensor.Tensor{px: random(500, 16, 6)}
	pwant := single(t, group[0], []*tensor.Node{py}, pfeeds)
	pl, err := rt.NewPipeline(group, []*tensor.Node{py}, []*tensor.Node{py.Input(0)}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	pgot, err := pl.Run(pfeeds)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "pipeline over the group", pgot[0], pwant[0], 1e-5)
	x, target, vars, outputs := sgdStep(16)
	one := runtimeOn(t, group[0])
	m, err := rt.NewMeta(group)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	stepBoth(t, one, m, outputs, 3, func(step int) map[*tensor.Node]*tensor.Tensor {
		return map[*tensor.Node]*tensor.Tensor{x: random(uint64(300+step), 16, 6), target: random(uint64(400+step), 16, 3)}
	}, func(step int, got, want []*tensor.Tensor) {
		closeTo(t, fmt.Sprintf("step %d loss", step), got[0], want[0], 1e-5)
		for _, v := range vars {
			w, _ := one.Read(v)
			reps, err := m.Replicas(v)
			if err != nil {
				t.Fatal(err)
			}
			for k, r := range reps {
				closeTo(t, fmt.Sprintf("step %d: %v on %s", step, v, group[k].ID()), r, w, 1e-5)
				if !bytes.Equal(r.Bytes(), reps[0].Bytes()) {
					t.Fatalf("step %d: %v differs between the devices", step, v)
				}
			}
		}
	})
}

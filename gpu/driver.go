package gpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/runtime"
)

// driver lists the Vulkan devices for the runtime's registry and opens any of them,
// each with an instance of its own, so several can be open at once (the meta device,
// multi-GPU work). GML_VK_DEVICES limits the list; GML_VK_DEVICE picks the default.
type driver struct {
	mu    sync.Mutex
	infos Infos // from the last Devices call, for Default
}

func init() {
	runtime.RegisterDriver("gpu", 10, &driver{})
}

// Devices lists the Vulkan devices, or those GML_VK_DEVICES names (a comma-separated
// list of indices or name parts: "0,1", "H200"), without opening them.
func (dr *driver) Devices() ([]runtime.DeviceInfo, error) {
	infos, err := Devices()
	if err != nil {
		return nil, err
	}
	infos, err = visible(infos, os.Getenv("GML_VK_DEVICES"))
	if err != nil {
		return nil, err
	}
	dr.mu.Lock()
	dr.infos = infos
	dr.mu.Unlock()
	out := make([]runtime.DeviceInfo, len(infos))
	for i, in := range infos {
		out[i] = runtimeInfo(in)
	}
	return out, nil
}

// visible keeps the devices a GML_VK_DEVICES value names, in its order. A device named
// twice is listed twice and opened twice, each time with an instance, memory pools and
// queues of its own: a group of replicas of one GPU, which exercises multi-device code
// on a machine with one.
func visible(infos Infos, list string) (Infos, error) {
	if strings.TrimSpace(list) == "" {
		return infos, nil
	}
	var out Infos
	for _, want := range strings.Split(list, ",") {
		want = strings.TrimSpace(want)
		i, err := choose(infos, want)
		if err != nil {
			return nil, fmt.Errorf("gpu: GML_VK_DEVICES=%q: %w", list, err)
		}
		out = append(out, infos[i])
	}
	return out, nil
}

// Default is the device GML_VK_DEVICE names, else the best of the listed ones.
func (dr *driver) Default(devs []runtime.DeviceInfo) (int, error) {
	dr.mu.Lock()
	infos := dr.infos
	dr.mu.Unlock()
	want := os.Getenv("GML_VK_DEVICE")
	if want != "" {
		if i, err := strconv.Atoi(want); err == nil {
			// An index names the loader's enumeration, whatever GML_VK_DEVICES keeps.
			for _, in := range infos {
				if in.Index == i {
					return i, nil
				}
			}
			return 0, fmt.Errorf("gpu: GML_VK_DEVICE=%d is not among the devices listed (%s)", i, names(infos))
		}
	}
	i, err := choose(infos, want)
	if err != nil {
		return 0, err
	}
	return infos[i].Index, nil
}

func names(infos Infos) string {
	s := make([]string, len(infos))
	for i, in := range infos {
		s[i] = strconv.Itoa(in.Index) + ": " + in.Name
	}
	return strings.Join(s, "; ")
}

// Open opens device index of the loader's enumeration.
func (dr *driver) Open(index int) (runtime.Backend, error) {
	d, err := OpenIndex(index)
	if err != nil {
		return nil, err
	}
	return &Backend{d: d}, nil
}

// OpenIndex opens the device at position index of the loader's enumeration (Info.Index),
// with an instance of its own: any number of devices may be open at once.
func OpenIndex(index int) (*Device, error) {
	inst, err := newInstance()
	if err != nil {
		return nil, err
	}
	d, err := openOn(inst, strconv.Itoa(index))
	if err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, err
	}
	return d, nil
}

// runtimeInfo describes a device in the runtime's terms. CPU implementations such as
// lavapipe are runtime.SoftwareGPU, which "auto" selection passes over.
func runtimeInfo(in Info) runtime.DeviceInfo {
	kind := map[string]runtime.DeviceType{"discrete": runtime.DiscreteGPU, "integrated": runtime.IntegratedGPU,
		"virtual": runtime.VirtualGPU, "cpu": runtime.SoftwareGPU}[in.Type]
	if kind == "" {
		kind = runtime.OtherGPU
	}
	return runtime.DeviceInfo{
		Backend: "vulkan", Index: in.Index, Name: in.Name, Kind: kind, Driver: in.Driver,
		MemoryBytes: int64(in.DeviceLocalBytes()), MaxAlloc: int64(in.MaxAllocation),
		FP16: in.FP16, BF16: in.BF16, CoopMatKHR: len(in.CoopMatKHR) > 0, CoopMatNV: len(in.CoopMatNV) > 0,
		SubgroupSize: int(in.SubgroupSize),
		MaxBinding:   int64(in.MaxStorageBufferRange), SharedMemory: int64(in.SharedMemory), MaxWorkgroup: int(in.MaxInvocations),
		TimestampPeriod: float64(in.TimestampPeriod),
		Notes:           []string{"Vulkan " + in.APIVersion},
	}
}

package runtime

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The device registry. Backends register from init: a backend with one device (the
// CPU) registers a Factory, one that finds several (Vulkan) a Driver, which lists its
// devices without opening them and opens any of them. The registry numbers every
// device of every backend (GPUs first, by priority), opens each at most once per
// process, and answers lookups by index, ID, name or type. Several devices of one
// backend may be open at once, each its own Backend: the meta device and multi-GPU
// work build on that.

// DeviceType classifies a device, for lookups and for "auto" selection.
type DeviceType string

// The device types.
const (
	CPU           DeviceType = "cpu"
	DiscreteGPU   DeviceType = "discrete-gpu"
	IntegratedGPU DeviceType = "integrated-gpu"
	VirtualGPU    DeviceType = "virtual-gpu"
	SoftwareGPU   DeviceType = "software-gpu" // a GPU API implemented on the CPU (Mesa lavapipe)
	OtherGPU      DeviceType = "other-gpu"
)

// IsGPU reports whether t is a GPU of any kind, software ones included.
func (t DeviceType) IsGPU() bool { return t != CPU && t != "" }

// rank orders types for the best device: real GPUs, then the CPU, then software
// GPUs, which are slower than the CPU backend on the same cores.
func (t DeviceType) rank() int {
	switch t {
	case DiscreteGPU:
		return 5
	case IntegratedGPU:
		return 4
	case VirtualGPU:
		return 3
	case OtherGPU:
		return 2
	case CPU:
		return 1
	}
	return 0
}

// Factory opens a backend. It returns an error, never panics, when the device is
// missing (no Vulkan loader, no GPU, an old driver).
type Factory func() (Backend, error)

// Driver enumerates and opens the devices of a backend that may find several.
type Driver interface {
	// Devices describes every device the backend can open, without opening any, each
	// with its Index set. An error (no loader, no device) makes the backend unavailable.
	Devices() ([]DeviceInfo, error)
	// Default returns the Index of the device to open when the backend is asked for by
	// name alone: the one its environment variable names (GML_VK_DEVICE), else its best.
	Default(devices []DeviceInfo) (int, error)
	// Open opens the device whose Index is index. The registry calls it once per device
	// and process.
	Open(index int) (Backend, error)
}

type registration struct {
	name     string
	priority int
	factory  Factory // a backend with one device
	driver   Driver  // a backend with several
}

var (
	registryMu sync.Mutex
	registry   []registration
)

// Register makes a backend with one device available under name ("cpu"). Backends call
// it from init; "auto" device selection prefers higher priority. The runtime never
// imports a backend: programs link them in (package backends imports all of them).
func Register(name string, priority int, open Factory) {
	register(registration{name: name, priority: priority, factory: open})
}

// RegisterDriver makes a backend whose devices d enumerates available under name
// ("gpu"), as Register does for a backend with one device.
func RegisterDriver(name string, priority int, d Driver) {
	register(registration{name: name, priority: priority, driver: d})
}

func register(r registration) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, x := range registry {
		if x.name == r.name {
			panic("runtime: backend registered twice: " + r.name)
		}
	}
	registry = append(registry, r)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].priority > registry[j].priority })
}

// Registered lists the registered backend names, highest priority first.
func Registered() []string {
	registryMu.Lock()
	defer registryMu.Unlock()
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}

func registrations() []registration {
	registryMu.Lock()
	defer registryMu.Unlock()
	return append([]registration(nil), registry...)
}

// PhysicalDevice is one device of a registered backend as the registry lists it: described
// without being opened. Open opens it once per process; every runtime, buffer and
// meta device on it shares that Backend.
type PhysicalDevice struct {
	index int
	id    string
	reg   registration
	info  DeviceInfo
}

// Index is the device's position in Devices().
func (d *PhysicalDevice) Index() int { return d.index }

// ID names the device uniquely: the registered name of a backend with one device
// ("cpu"), the backend and index of one with several ("vulkan:0"). FindDevice and the
// Device option accept it.
func (d *PhysicalDevice) ID() string { return d.id }

// Name is the device's own name: "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)".
func (d *PhysicalDevice) Name() string { return d.info.Name }

// Type classifies the device.
func (d *PhysicalDevice) Type() DeviceType { return d.info.Kind }

// Info describes the device as its backend reports it.
func (d *PhysicalDevice) Info() DeviceInfo { return d.info }

// String describes the device in one line: "vulkan:0 llvmpipe (...) (software-gpu)".
func (d *PhysicalDevice) String() string {
	return fmt.Sprintf("%s %s (%s)", d.id, d.info.Name, d.info.Kind)
}

// registry state: the device list (per registration, enumerated once) and the open
// backends (per device ID), both until Shutdown.
var (
	openMu  sync.Mutex
	listed  map[string][]*PhysicalDevice // registration name -> its devices
	listErr map[string]error             // registration name -> why it has none
	opened  = map[string]Backend{}
	openErr = map[string]error{} // device ID -> why it did not open
)

// list enumerates the devices of registration r once. openMu must be held.
func list(r registration) ([]*PhysicalDevice, error) {
	if devs, ok := listed[r.name]; ok {
		return devs, nil
	}
	if err, ok := listErr[r.name]; ok {
		return nil, err
	}
	if listed == nil {
		listed, listErr = map[string][]*PhysicalDevice{}, map[string]error{}
	}
	var devs []*PhysicalDevice
	if r.factory != nil {
		// A single-device backend is described by opening it (cheap for the CPU).
		b, err := r.factory()
		if err != nil {
			listErr[r.name] = err
			return nil, err
		}
		d := &PhysicalDevice{id: r.name, reg: r, info: b.Info()}
		opened[d.id] = b
		devs = []*PhysicalDevice{d}
	} else {
		infos, err := r.driver.Devices()
		if err == nil && len(infos) == 0 {
			err = fmt.Errorf("runtime: backend %s found no device", r.name)
		}
		if err != nil {
			listErr[r.name] = err
			return nil, err
		}
		seen := map[string]int{}
		for _, info := range infos {
			// A device listed again (GML_VK_DEVICES=0,0) is another opening of it:
			// "vulkan:0#2".
			id := fmt.Sprintf("%s:%d", info.Backend, info.Index)
			if seen[id]++; seen[id] > 1 {
				id = fmt.Sprintf("%s#%d", id, seen[id])
			}
			devs = append(devs, &PhysicalDevice{id: id, reg: r, info: info})
		}
	}
	listed[r.name] = devs
	return devs, nil
}

// allDevices lists every device, numbered, and why each unavailable backend is.
func allDevices() ([]*PhysicalDevice, map[string]error) {
	openMu.Lock()
	defer openMu.Unlock()
	var all []*PhysicalDevice
	errs := map[string]error{}
	for _, r := range registrations() {
		devs, err := list(r)
		if err != nil {
			errs[r.name] = err
			continue
		}
		all = append(all, devs...)
	}
	for i, d := range all {
		d.index = i
	}
	return all, errs
}

// Open returns the device's backend, opening it on first use. Later calls, and every
// runtime on the device, share it until Shutdown.
func (d *PhysicalDevice) Open() (Backend, error) {
	openMu.Lock()
	defer openMu.Unlock()
	return d.open()
}

// open opens d once. openMu must be held.
func (d *PhysicalDevice) open() (Backend, error) {
	if b, ok := opened[d.id]; ok {
		return b, nil
	}
	if err, ok := openErr[d.id]; ok {
		return nil, err
	}
	var b Backend
	var err error
	if d.reg.driver != nil {
		b, err = d.reg.driver.Open(d.info.Index)
	} else {
		b, err = d.reg.factory() // reopening after Shutdown
	}
	if err != nil {
		err = fmt.Errorf("runtime: opening %s: %w", d.id, err)
		openErr[d.id] = err
		return nil, err
	}
	opened[d.id] = b
	return b, nil
}

// open returns the process-wide instance of the registered backend name's default
// device, opening it once.
func open(name string) (Backend, error) {
	d, err := defaultDevice(name)
	if err != nil {
		return nil, err
	}
	return d.Open()
}

// defaultDevice is the device registration name opens when asked for by name alone.
func defaultDevice(name string) (*PhysicalDevice, error) {
	all, errs := allDevices()
	for _, r := range registrations() {
		if r.name != name {
			continue
		}
		if err := errs[name]; err != nil {
			return nil, err
		}
		var devs []*PhysicalDevice
		var infos []DeviceInfo
		for _, d := range all {
			if d.reg.name == name {
				devs = append(devs, d)
				infos = append(infos, d.info)
			}
		}
		if r.driver == nil {
			return devs[0], nil
		}
		idx, err := r.driver.Default(infos)
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			if d.info.Index == idx {
				return d, nil
			}
		}
		return nil, fmt.Errorf("runtime: backend %s chose device %d, which it did not list", name, idx)
	}
	return nil, fmt.Errorf("runtime: no %q backend is linked into this program (import github.com/gml-dev/gml/backends)", name)
}

// Shutdown closes every opened backend and forgets the device list; the next New or
// lookup opens them again. The kernel calls it on restart so that no device object
// outlives its interpreter.
func Shutdown() error {
	openMu.Lock()
	var errs []error
	for id, b := range opened {
		if err := b.Close(); err != nil {
			errs = append(errs, fmt.Errorf("runtime: closing %s: %w", id, err))
		}
		delete(opened, id)
	}
	clear(openErr)
	listed, listErr = nil, nil
	openMu.Unlock()
	defaultMu.Lock()
	defaultRT = nil
	defaultMu.Unlock()
	return errors.Join(errs...)
}

// DeviceList is every device of every registered backend, numbered, and why the
// backends without devices have none. It renders as a table.
type DeviceList struct {
	Devices []*PhysicalDevice
	Errors  map[string]string // backend name -> why it is unavailable
}

// Devices lists every device the registered backends find (GPUs first, then the CPU)
// without opening the GPUs, and describes why any backend is unavailable.
func Devices() DeviceList {
	all, errs := allDevices()
	l := DeviceList{Devices: all, Errors: map[string]string{}}
	for name, err := range errs {
		l.Errors[name] = err.Error()
	}
	return l
}

// DeviceAt returns device i of Devices().
func DeviceAt(i int) (*PhysicalDevice, error) {
	all, _ := allDevices()
	if i < 0 || i >= len(all) {
		return nil, fmt.Errorf("runtime: device %d does not exist (have %d: %s)", i, len(all), deviceNames(all))
	}
	return all[i], nil
}

// BestDevice returns the device "auto" selection uses: a real GPU (discrete, then
// integrated, virtual, other; the backend's default among equals), else the CPU.
// Software GPUs such as lavapipe are chosen only by asking for them.
func BestDevice() (*PhysicalDevice, error) {
	all, errs := allDevices()
	var best *PhysicalDevice
	for _, d := range all {
		if d.info.Kind.rank() == 0 {
			continue
		}
		if best == nil || d.info.Kind.rank() > best.info.Kind.rank() {
			best = d
		}
	}
	if best == nil {
		return nil, fmt.Errorf("runtime: no device found (%v)", errs)
	}
	// Among the registration's devices, its own default wins (GML_VK_DEVICE).
	if best.reg.driver != nil {
		if d, err := defaultDevice(best.reg.name); err == nil && d.info.Kind == best.info.Kind {
			best = d
		}
	}
	return best, nil
}

// FindDevice looks a device up by what a user may call it:
//   - "best" or "auto": BestDevice;
//   - an index into Devices(): "0";
//   - an ID: "cpu", "vulkan:1";
//   - a backend name: "gpu" or "vulkan" (that backend's default device);
//   - a type: "cpu", "gpu" (any GPU, software ones included), "discrete-gpu",
//     "integrated-gpu", "virtual-gpu", "software-gpu" (the best device of the type);
//   - otherwise a case-insensitive part of a device's name: "H200", "llvmpipe".
func FindDevice(query string) (*PhysicalDevice, error) {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" || q == "best" || q == "auto" {
		return BestDevice()
	}
	all, errs := allDevices()
	if i, err := strconv.Atoi(q); err == nil {
		return DeviceAt(i)
	}
	for _, d := range all {
		if strings.ToLower(d.id) == q {
			return d, nil
		}
	}
	for _, r := range registrations() {
		if r.name == q {
			return defaultDevice(q)
		}
	}
	for _, d := range all {
		if strings.ToLower(d.info.Backend) == q {
			return defaultDevice(d.reg.name)
		}
	}
	if q == "gpu" {
		// Asked for "gpu" with no backend of that name: the best GPU of any kind.
		var best *PhysicalDevice
		for _, d := range all {
			if d.info.Kind.IsGPU() && (best == nil || d.info.Kind.rank() > best.info.Kind.rank()) {
				best = d
			}
		}
		if best != nil {
			return best, nil
		}
		return nil, fmt.Errorf("runtime: no GPU found (%v)", errs)
	}
	if t := DeviceType(q); t.rank() > 0 || t == SoftwareGPU {
		var best *PhysicalDevice
		for _, d := range all {
			if d.info.Kind == t && (best == nil || d.info.MemoryBytes > best.info.MemoryBytes) {
				best = d
			}
		}
		if best != nil {
			return best, nil
		}
		return nil, fmt.Errorf("runtime: no %s device found (have %s)", t, deviceNames(all))
	}
	for _, d := range all {
		if strings.Contains(strings.ToLower(d.info.Name), q) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("runtime: unknown device %q (want auto, best, cpu, gpu, a device type such as software-gpu, an index, an ID or part of a name; have %s)", query, deviceNames(all))
}

func deviceNames(all []*PhysicalDevice) string {
	if len(all) == 0 {
		return "none"
	}
	names := make([]string, len(all))
	for i, d := range all {
		names[i] = fmt.Sprintf("%d: %s", i, d)
	}
	return strings.Join(names, "; ")
}

// backendID names an opened backend by its device ID ("vulkan:0"), or by its name
// when the registry did not open it (tests' backends).
func backendID(b Backend) string {
	openMu.Lock()
	defer openMu.Unlock()
	for id, x := range opened {
		if x == b {
			return id
		}
	}
	return b.Name()
}

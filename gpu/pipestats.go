package gpu

/*
#include <stdlib.h>
#include <stdint.h>

// The VK_KHR_pipeline_executable_properties structures, laid out as in vulkan_core.h.
typedef struct { int32_t sType; void *pNext; uint64_t pipeline; } gml_pipeline_info;
typedef struct { int32_t sType; void *pNext; uint32_t stages; char name[256], description[256]; uint32_t subgroupSize; } gml_exec_props;
typedef struct { int32_t sType; void *pNext; uint64_t pipeline; uint32_t index; } gml_exec_info;
typedef struct { int32_t sType; void *pNext; char name[256], description[256]; int32_t format; union { uint32_t b32; int64_t i64; uint64_t u64; double f64; } value; } gml_exec_stat;
typedef struct { int32_t sType; void *pNext; char name[256], description[256]; uint32_t isText; size_t dataSize; void *data; } gml_exec_ir;
typedef int32_t (*gml_exec_props_t)(void *device, const gml_pipeline_info *info, uint32_t *n, gml_exec_props *out);
typedef int32_t (*gml_exec_stats_t)(void *device, const gml_exec_info *info, uint32_t *n, gml_exec_stat *out);
typedef int32_t (*gml_exec_irs_t)(void *device, const gml_exec_info *info, uint32_t *n, gml_exec_ir *out);

static int32_t gml_exec_props_call(void *fn, void *device, uint64_t pipe, uint32_t *n, gml_exec_props *out) {
	gml_pipeline_info pi = {1000269001, NULL, pipe}; // PIPELINE_INFO_KHR
	for (uint32_t i = 0; out && i < *n; i++) { out[i].sType = 1000269002; out[i].pNext = NULL; }
	return ((gml_exec_props_t)fn)(device, &pi, n, out);
}

static int32_t gml_exec_stats_call(void *fn, void *device, uint64_t pipe, uint32_t index, uint32_t *n, gml_exec_stat *out) {
	gml_exec_info ei = {1000269003, NULL, pipe, index}; // PIPELINE_EXECUTABLE_INFO_KHR
	for (uint32_t i = 0; out && i < *n; i++) { out[i].sType = 1000269004; out[i].pNext = NULL; }
	return ((gml_exec_stats_t)fn)(device, &ei, n, out);
}

// gml_exec_irs_call lists the internal representations (out NULL: count only; data
// NULL: sizes only, then again with buffers).
static int32_t gml_exec_irs_call(void *fn, void *device, uint64_t pipe, uint32_t index, uint32_t *n, gml_exec_ir *out) {
	gml_exec_info ei = {1000269003, NULL, pipe, index};
	return ((gml_exec_irs_t)fn)(device, &ei, n, out);
}
*/
import "C"

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// pipelineStatsExt lets a driver report what it compiled a pipeline to: register
// counts, spills, shared memory, and for some drivers the compiled code itself.
const pipelineStatsExt = "VK_KHR_pipeline_executable_properties"

// VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR and ..._INTERNAL_REPRESENTATIONS_BIT_KHR.
const (
	captureStatistics = 0x40
	captureInternals  = 0x80
)

// pipelineStatsWanted reports whether GML_VK_PIPELINE_STATS=1 asks for the statistics.
// They are off by default: capturing them may slow pipeline creation, and perhaps the
// pipelines (gpu/PERF.md item 11).
func pipelineStatsWanted() bool { return os.Getenv("GML_VK_PIPELINE_STATS") == "1" }

// PipelineReport is what the driver says about one compiled kernel.
type PipelineReport struct {
	Kernel     string            // shader variant and its specialisation constants
	Executable string            // the driver's name for the compiled stage
	Stats      []PipelineStat    // in the driver's order
	Internals  map[string]string // textual internal representations by name (may be empty)
}

// PipelineStat is one driver statistic, such as a register count.
type PipelineStat struct {
	Name, Value, Description string
}

// String renders the report as one line of name=value pairs.
func (r PipelineReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s]", r.Kernel, r.Executable)
	for _, s := range r.Stats {
		fmt.Fprintf(&b, " %s=%s", strings.ReplaceAll(s.Name, " ", "_"), s.Value)
	}
	return b.String()
}

// PipelineReports describes every kernel built so far, sorted by name. It needs
// GML_VK_PIPELINE_STATS=1 when the device was opened, and a driver with
// VK_KHR_pipeline_executable_properties.
func (d *Device) PipelineReports() ([]PipelineReport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	switch {
	case !d.Info.extensions[pipelineStatsExt]:
		return nil, fmt.Errorf("%w: %s lacks %s, through which drivers report what they compiled", ErrUnsupported, d.Info.Name, pipelineStatsExt)
	case !d.pipeStats:
		return nil, fmt.Errorf("%w: set GML_VK_PIPELINE_STATS=1 before the device is opened to capture pipeline statistics", ErrUnsupported)
	}
	propsFn := instanceProc(d.inst, "vkGetPipelineExecutablePropertiesKHR")
	statsFn := instanceProc(d.inst, "vkGetPipelineExecutableStatisticsKHR")
	irsFn := instanceProc(d.inst, "vkGetPipelineExecutableInternalRepresentationsKHR")
	if propsFn == nil || statsFn == nil {
		return nil, fmt.Errorf("%w: %s lists %s without its functions", ErrUnsupported, d.Info.Name, pipelineStatsExt)
	}
	dev := unsafe.Pointer(d.dev)
	var out []PipelineReport
	for key, k := range d.pipes.kernels {
		pipe := handle(k.pipe)
		var n C.uint32_t
		if err := check(vk.Result(C.gml_exec_props_call(propsFn, dev, pipe, &n, nil)), "vkGetPipelineExecutablePropertiesKHR"); err != nil || n == 0 {
			continue
		}
		props := make([]C.gml_exec_props, n)
		if err := check(vk.Result(C.gml_exec_props_call(propsFn, dev, pipe, &n, &props[0])), "vkGetPipelineExecutablePropertiesKHR"); err != nil {
			return nil, err
		}
		for i := range props[:n] {
			r := PipelineReport{Kernel: fmt.Sprintf("%s%v", key.shader, k.spec), Executable: C.GoString(&props[i].name[0]), Internals: map[string]string{}}
			var ns C.uint32_t
			if C.gml_exec_stats_call(statsFn, dev, pipe, C.uint32_t(i), &ns, nil) == 0 && ns > 0 {
				stats := make([]C.gml_exec_stat, ns)
				if err := check(vk.Result(C.gml_exec_stats_call(statsFn, dev, pipe, C.uint32_t(i), &ns, &stats[0])), "vkGetPipelineExecutableStatisticsKHR"); err != nil {
					return nil, err
				}
				for _, s := range stats[:ns] {
					r.Stats = append(r.Stats, PipelineStat{Name: C.GoString(&s.name[0]), Value: statValue(&s), Description: C.GoString(&s.description[0])})
				}
			}
			if irsFn != nil {
				r.Internals = internals(irsFn, dev, pipe, C.uint32_t(i))
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kernel < out[j].Kernel })
	return out, nil
}

// statValue formats a statistic by its VkPipelineExecutableStatisticFormatKHR.
func statValue(s *C.gml_exec_stat) string {
	p := unsafe.Pointer(&s.value)
	switch s.format {
	case 0:
		return fmt.Sprint(*(*uint32)(p) != 0)
	case 1:
		return fmt.Sprint(*(*int64)(p))
	case 2:
		return fmt.Sprint(*(*uint64)(p))
	default:
		return fmt.Sprint(*(*float64)(p))
	}
}

// internals returns the textual internal representations of one executable.
func internals(fn, dev unsafe.Pointer, pipe C.uint64_t, index C.uint32_t) map[string]string {
	out := map[string]string{}
	var n C.uint32_t
	if C.gml_exec_irs_call(fn, dev, pipe, index, &n, nil) != 0 || n == 0 {
		return out
	}
	irs := (*[1 << 10]C.gml_exec_ir)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.gml_exec_ir{}))))[:n:n]
	defer C.free(unsafe.Pointer(&irs[0]))
	for i := range irs {
		irs[i].sType = 1000269005 // PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR
	}
	if C.gml_exec_irs_call(fn, dev, pipe, index, &n, &irs[0]) != 0 {
		return out
	}
	for i := range irs[:n] {
		if irs[i].isText != 0 && irs[i].dataSize > 0 {
			irs[i].data = C.malloc(irs[i].dataSize)
			defer C.free(irs[i].data)
		}
	}
	// VK_INCOMPLETE (5) still fills what fits.
	if res := C.gml_exec_irs_call(fn, dev, pipe, index, &n, &irs[0]); res != 0 && res != 5 {
		return out
	}
	for _, ir := range irs[:n] {
		if ir.data != nil {
			out[C.GoString(&ir.name[0])] = strings.TrimRight(C.GoStringN((*C.char)(ir.data), C.int(ir.dataSize)), "\x00")
		}
	}
	return out
}

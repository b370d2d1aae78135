package gpu

/*
#include <stdint.h>
#include <stdlib.h>

// VkDeviceQueueGlobalPriorityCreateInfoKHR (the same struct as the EXT's), as in
// vulkan_core.h.
typedef struct {
	int32_t sType;
	const void *pNext;
	int32_t globalPriority;
} gml_global_priority;

static gml_global_priority *gml_new_global_priority(int32_t p) {
	gml_global_priority *g = calloc(1, sizeof *g);
	g->sType = 1000174000; // VK_STRUCTURE_TYPE_DEVICE_QUEUE_GLOBAL_PRIORITY_CREATE_INFO_KHR
	g->globalPriority = p;
	return g;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// Scheduling settings of the Vulkan queue and of the CUDA engine, for measuring what a
// hand-over between them costs (PERF.md, "Where the hand-over's 0.34 ms goes"). Unset,
// every one is the driver's default.

// queuePriorities are VkQueueGlobalPriorityKHR's values.
var queuePriorities = map[string]int32{"low": 128, "medium": 256, "high": 512, "realtime": 1024}

// globalPriority returns the VkDeviceQueueGlobalPriorityCreateInfoKHR that
// GML_VK_QUEUE_PRIORITY (low, medium, high, realtime) asks for, a one-link chain for
// the caller to free with freeChain, with the extension to enable (NUL-terminated) and
// the priority's name; nil and why not when it is unset, not a priority, or not offered
// by the device.
func globalPriority(in Info) (unsafe.Pointer, string, string) {
	v := strings.ToLower(os.Getenv("GML_VK_QUEUE_PRIORITY"))
	if v == "" {
		return nil, "", ""
	}
	p, ok := queuePriorities[v]
	if !ok {
		return nil, "", fmt.Sprintf("GML_VK_QUEUE_PRIORITY=%s is not low, medium, high or realtime", v)
	}
	ext := ""
	for _, e := range []string{"VK_KHR_global_priority", "VK_EXT_global_priority"} {
		if in.extensions[e] {
			ext = e
			break
		}
	}
	if ext == "" {
		return nil, "", "GML_VK_QUEUE_PRIORITY=" + v + ": the device offers no VK_KHR_global_priority"
	}
	return unsafe.Pointer(C.gml_new_global_priority(C.int32_t(p))), ext + "\x00", v
}

// CUDA scheduling settings (cudaDeviceScheduleSpin and so on, driver_types.h).
var cudaSchedules = map[string]int{"auto": 0, "spin": 1, "yield": 2, "blocking": 4}

// cudaSettings is what GML_CUDA_SCHEDULE (auto, spin, yield, blocking: the context's
// host-side wait, cudaSetDeviceFlags) and GML_CUDA_STREAM_PRIORITY (high, low or a
// number in cudaDeviceGetStreamPriorityRange's range, lower is more urgent) ask for;
// schedule is -1 and priorityName "" where unset.
type cudaSettings struct {
	schedule     int
	priority     int
	priorityName string // "high", "low" or the number; "" for the default
}

func cudaSettingsFromEnv() (cudaSettings, error) {
	s := cudaSettings{schedule: -1}
	if v := strings.ToLower(os.Getenv("GML_CUDA_SCHEDULE")); v != "" {
		f, ok := cudaSchedules[v]
		if !ok {
			return s, fmt.Errorf("GML_CUDA_SCHEDULE=%s is not auto, spin, yield or blocking", v)
		}
		s.schedule = f
	}
	switch v := strings.ToLower(os.Getenv("GML_CUDA_STREAM_PRIORITY")); v {
	case "", "high", "low":
		s.priorityName = v
	default:
		n, err := strconv.Atoi(v)
		if err != nil {
			return s, fmt.Errorf("GML_CUDA_STREAM_PRIORITY=%s is not high, low or a number", v)
		}
		s.priority, s.priorityName = n, v
	}
	return s, nil
}

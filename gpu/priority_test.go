package gpu

import (
	"strings"
	"testing"
	"unsafe"
)

func TestCUDASettingsFromEnv(t *testing.T) {
	for _, c := range []struct {
		schedule, priority string
		want               cudaSettings
		err                string
	}{
		{want: cudaSettings{schedule: -1}},
		{schedule: "spin", priority: "high", want: cudaSettings{schedule: 1, priorityName: "high"}},
		{schedule: "Blocking", priority: "low", want: cudaSettings{schedule: 4, priorityName: "low"}},
		{schedule: "auto", priority: "-3", want: cudaSettings{schedule: 0, priority: -3, priorityName: "-3"}},
		{schedule: "fast", err: "GML_CUDA_SCHEDULE=fast"},
		{priority: "urgent", err: "GML_CUDA_STREAM_PRIORITY=urgent"},
	} {
		t.Setenv("GML_CUDA_SCHEDULE", c.schedule)
		t.Setenv("GML_CUDA_STREAM_PRIORITY", c.priority)
		got, err := cudaSettingsFromEnv()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q/%q: error %v, want one naming %s", c.schedule, c.priority, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q/%q: %+v, %v; want %+v", c.schedule, c.priority, got, err, c.want)
		}
	}
}

func TestGlobalPriority(t *testing.T) {
	offered := Info{extensions: map[string]bool{"VK_EXT_global_priority": true}}
	for _, c := range []struct {
		env  string
		in   Info
		ext  string
		what string
	}{
		{env: "", in: offered},
		{env: "high", in: offered, ext: "VK_EXT_global_priority\x00", what: "high"},
		{env: "REALTIME", in: Info{extensions: map[string]bool{"VK_KHR_global_priority": true, "VK_EXT_global_priority": true}}, ext: "VK_KHR_global_priority\x00", what: "realtime"},
		{env: "high", in: Info{}, what: "the device offers no VK_KHR_global_priority"},
		{env: "top", in: offered, what: "is not low, medium, high or realtime"},
	} {
		t.Setenv("GML_VK_QUEUE_PRIORITY", c.env)
		p, ext, what := globalPriority(c.in)
		if (p != nil) != (c.ext != "") || ext != c.ext || !strings.Contains(what, c.what) {
			t.Errorf("%q: struct %v, extension %q, %q; want extension %q and %q", c.env, p != nil, ext, what, c.ext, c.what)
		}
		if p != nil {
			if got := *(*int32)(unsafe.Add(p, 16)); got != queuePriorities[c.what] {
				t.Errorf("%q: globalPriority %d, want %d", c.env, got, queuePriorities[c.what])
			}
			freeChain(p)
		}
	}
}

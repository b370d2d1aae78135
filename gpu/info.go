package gpu

import (
	"fmt"
	"html"
	"strings"

	"github.com/gml-dev/gml/internal/sysmem"
)

// Heap is one memory heap of a device.
type Heap struct {
	Size        uint64
	DeviceLocal bool
}

// CoopMatShape is one cooperative-matrix configuration a device reports: an M×K by K×N
// product with the given component types, accumulated in C and returned as Result.
type CoopMatShape struct {
	M, N, K           uint32
	A, B, C, Result   string
	SubgroupScope     bool
	SaturatingAccumul bool
}

// String renders the shape as "16x8x16 f16*f16+f32->f32".
func (s CoopMatShape) String() string {
	return fmt.Sprintf("%dx%dx%d %s*%s+%s->%s", s.M, s.N, s.K, s.A, s.B, s.C, s.Result)
}

// Info describes one Vulkan physical device: what `gml devices` prints and what the
// backend consults when it picks shader variants.
type Info struct {
	Index      int    // position in the loader's enumeration (what GML_VK_DEVICE=N selects)
	Name       string // e.g. "NVIDIA H200"
	Type       string // discrete, integrated, virtual, cpu or other
	Driver     string // driver name and version string
	APIVersion string // highest Vulkan version the device supports, e.g. "1.3.255"
	apiVersion uint32
	VendorID   uint32
	DeviceID   uint32
	Heaps      []Heap
	FP16       bool // shaderFloat16
	BF16       bool // VK_KHR_shader_bfloat16 with bfloat16 cooperative matrices
	CoopMatKHR []CoopMatShape
	CoopMatNV  []CoopMatShape
	// CoopMat2MaxWorkgroup is the largest workgroup for workgroup-scope cooperative
	// matrices through VK_NV_cooperative_matrix2 (with tensor addressing and flexible
	// dimensions); 0 when the device lacks them.
	CoopMat2MaxWorkgroup uint32
	// CoopMat2MaxDimension bounds the rows and columns of those matrices.
	CoopMat2MaxDimension uint32
	SubgroupSize         uint32
	// MaxAllocation is maxMemoryAllocationSize: the largest single device allocation.
	MaxAllocation uint64
	// MaxStorageBufferRange bounds the size of one storage-buffer binding.
	MaxStorageBufferRange uint64
	SharedMemory          uint32    // maxComputeSharedMemorySize in bytes
	MaxInvocations        uint32    // maxComputeWorkGroupInvocations
	MaxGroups             [3]uint32 // maxComputeWorkGroupCount
	TimestampPeriod       float32
	extensions            map[string]bool
}

// HasExtension reports whether the device advertises the named extension.
func (in Info) HasExtension(name string) bool { return in.extensions[name] }

// DeviceLocalBytes is the size of the largest device-local heap.
func (in Info) DeviceLocalBytes() uint64 {
	var best uint64
	for _, h := range in.Heaps {
		if h.DeviceLocal && h.Size > best {
			best = h.Size
		}
	}
	return best
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func shapesText(s []CoopMatShape) string {
	if len(s) == 0 {
		return "no"
	}
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}

// rows lists the table's (field, value) pairs in display order.
func (in Info) rows() [][2]string {
	heaps := make([]string, len(in.Heaps))
	for i, h := range in.Heaps {
		kind := "host"
		if h.DeviceLocal {
			kind = "device-local"
		}
		heaps[i] = sysmem.FormatBytes(h.Size) + " " + kind
	}
	return [][2]string{
		{"index", fmt.Sprint(in.Index)},
		{"name", in.Name},
		{"type", in.Type},
		{"driver", in.Driver},
		{"Vulkan API", in.APIVersion},
		{"memory heaps", strings.Join(heaps, ", ")},
		{"fp16", yesNo(in.FP16)},
		{"bf16", yesNo(in.BF16)},
		{"KHR cooperative matrix", shapesText(in.CoopMatKHR)},
		{"NV cooperative matrix", shapesText(in.CoopMatNV)},
		{"NV cooperative matrix 2", coopMat2Text(in.CoopMat2MaxWorkgroup, in.CoopMat2MaxDimension)},
		{"subgroup size", fmt.Sprint(in.SubgroupSize)},
		{"max allocation", sysmem.FormatBytes(in.MaxAllocation)},
		{"max storage buffer", sysmem.FormatBytes(in.MaxStorageBufferRange)},
		{"shared memory", sysmem.FormatBytes(uint64(in.SharedMemory))},
	}
}

func coopMat2Text(maxWorkgroup, maxDim uint32) string {
	if maxWorkgroup == 0 {
		return "no"
	}
	return fmt.Sprintf("workgroup scope up to %d invocations and %d rows, tensor addressing", maxWorkgroup, maxDim)
}

// String renders the device as an aligned two-column table.
func (in Info) String() string {
	var b strings.Builder
	for _, r := range in.rows() {
		fmt.Fprintf(&b, "%-24s %s\n", r[0], r[1])
	}
	return b.String()
}

// MIMEBundle renders the device as text/plain and text/html tables for notebooks.
func (in Info) MIMEBundle() map[string]any {
	var b strings.Builder
	b.WriteString("<table><tbody>")
	for _, r := range in.rows() {
		fmt.Fprintf(&b, "<tr><th style=\"text-align:left\">%s</th><td style=\"text-align:left\">%s</td></tr>", html.EscapeString(r[0]), html.EscapeString(r[1]))
	}
	b.WriteString("</tbody></table>")
	return map[string]any{"text/plain": in.String(), "text/html": b.String()}
}

// Infos is a list of devices; it renders as one table with a column per device.
type Infos []Info

// String renders every device, separated by blank lines.
func (s Infos) String() string {
	parts := make([]string, len(s))
	for i, in := range s {
		parts[i] = in.String()
	}
	return strings.Join(parts, "\n")
}

// MIMEBundle renders the devices as one HTML table with a column per device.
func (s Infos) MIMEBundle() map[string]any {
	var b strings.Builder
	b.WriteString("<table><tbody>")
	if len(s) > 0 {
		for r := range s[0].rows() {
			fmt.Fprintf(&b, "<tr><th style=\"text-align:left\">%s</th>", html.EscapeString(s[0].rows()[r][0]))
			for _, in := range s {
				fmt.Fprintf(&b, "<td style=\"text-align:left\">%s</td>", html.EscapeString(in.rows()[r][1]))
			}
			b.WriteString("</tr>")
		}
	}
	b.WriteString("</tbody></table>")
	return map[string]any{"text/plain": s.String(), "text/html": b.String()}
}

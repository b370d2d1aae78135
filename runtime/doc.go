// Package runtime compiles graphs from package tensor and runs them on backends.
//
// A Backend (backend.go) is a device: the CPU backend (runtime/cpu) or the Vulkan
// backend (gpu). Backends register themselves; runtime imports none of them. The
// scheduler assigns every node to the preferred backend, computes a fused op the backend
// lacks through its decomposition (tensor.Decompose) when the backend runs the
// primitives, falls back to the CPU for other ops it does not support (counting and,
// with GML_LOG_DEVICE=1, logging each fallback), inserts copies where the assignment changes, plans buffers with lifetimes
// (pools: weights, optimizer, activations, scratch, io) and prepares each segment once
// so that later runs only bind inputs and go. Variables stay resident on their device
// across runs, graphs and notebook cells; host<->device crossings are counted. Inputs
// are uploaded on every run, except tensors declared unchanging with Keep, which cross
// once while the input's buffer holds them. Run downloads every output; RunResident
// leaves them in their device buffers until the next run, for callers (ag) that keep
// many values readable but read few.
//
// The low-level API serves cells that drive devices by hand. The registry
// (registry.go) numbers every device of every backend; a Vulkan device listed twice in
// GML_VK_DEVICES is opened twice ("vulkan:0#2"), so device groups run on a machine with
// one GPU. Optional abilities of a backend (memory figures, ranged IO, fills, copies,
// asynchronous transfers, events) are small interfaces found by type assertion, with
// synchronous host paths where one is missing. A meta device (meta.go, meta_split.go)
// splits a graph over several devices: each node is split along an axis, whole, or a
// partial sum; values the parts must exchange (all-reduce, all-gather) cut the graph
// into phases with the exchange through the host between them, which works on every
// driver. A meta device's parts may be meta devices themselves (NewMetaOfGroups: tensor
// parallel groups inside a data-parallel device). A Pipeline (pipeline.go) cuts a graph
// into stages on several devices and streams micro-batches through them. The host
// exchange is the one transfer path for now: a device-to-device path (external memory,
// Vulkan device groups) is for a machine with several GPUs.
//
// Custom ops (custom.go) are host kernels registered by name with RegisterCustomOp and
// called by tensor.Custom nodes. The registry lives here, not in tensor, because a kernel
// is an execution concern (it receives memory and a range of rows); tensor only learns
// the names and the optional gradients, so that a wrong name fails when the node is
// built and Grad finds a custom op's rule. The CPU backend calls a kernel once per range
// of output rows, the ranges spread over the cores, so a kernel (also one interpreted in
// a notebook cell) must be safe to call concurrently on disjoint rows. No other backend
// can call Go, so the scheduler places custom nodes on the CPU and counts each one on a
// GPU graph as a fallback. Re-registering a name replaces the kernel for graphs compiled
// afterwards.
//
// Long-running loops in compiled code call Interrupted between steps; the Jupyter kernel
// binds each cell's context with BindInterrupt, so Interrupt stops Fit mid-epoch.
package runtime

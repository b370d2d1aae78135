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
// Long-running loops in compiled code call Interrupted between steps; the Jupyter kernel
// binds each cell's context with BindInterrupt, so Interrupt stops Fit mid-epoch.
package runtime

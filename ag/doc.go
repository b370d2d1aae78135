// Package ag is gml's eager autograd: a forward pass written in a notebook cell with
// ordinary Go control flow, Backward, gradients readable at any time, optimizers and
// schedules, memory and time reports — at compiled speed, because ag records onto the
// engine (the graph IR, tensor.Grad, resident runtime variables, the CPU and Vulkan
// backends) instead of launching one op at a time.
//
// # The two APIs
//
// nn (compiled, Keras-like) and ag (eager, PyTorch-like) share the op table, the
// gradient rules, the optimizer update ops, the backends and devices, and import
// neither each other. ag's objects — Tensor, Tape, the layers (Linear, Conv2DLayer,
// ...), Optimizer, Scheduler, Captured, DataLoader, NetView — belong to ag; an nn layer
// is not an ag layer. The bridge is FromNet: runtime.Model, an interface of the runtime
// package that nn's *Net implements, exposes a compiled model's variables, runtime and
// forward emission, so ag sees the model's own weights as parameters and its forward
// pass as one op. Training through the view trains the nn model; Fit continues from
// it. It is a view, not a converter: both sides hold the same tensor.Variables on the
// same runtime.
//
// # Deferred execution
//
// An op records a node on its tape and returns a Tensor whose shape and dtype are
// known at once; shape errors surface at the line that recorded the op. The recorded
// graph (a trace) runs as one compiled program when something needs it: a value is
// read (Item, Value, Float32s, String), the optimizer steps, Flush is called, or an op
// reads a parameter this trace has written (the write runs first). Backward appends
// tensor.Grad's nodes to the same trace, so forward, backward and the optimizer's
// update of one training step run as a single program, with no activation crossing to
// the host. A trace's signature (every node's op, attribute, dtype, shape and inputs,
// the identity of the variables it reads and writes, the data of small constants, and
// which values it produces) keys a cache of compiled programs: the next iteration of a
// loop records the same signature and runs the program compiled for the first, fed
// with its own data. Host data (constants, batches) enters as inputs fed per run;
// KeepOnDevice spares the upload of data used again and again.
//
// A run keeps the value of every tensor it recorded on the device, in the program's
// buffers, until the same program runs again (the next step), and reading one
// downloads only it. A tensor also remembers its recipe (op and inputs), so a value no
// longer held is recomputed when every parameter under it still has the version it
// read; when a parameter has changed since (an optimizer step), reading it is an
// error that says so — values read before the next step (a loss, an accuracy) never
// are. TapeMemory shows what the tape holds.
//
// Check mode (Eager(true)) runs every op as it is recorded, so a failing op reports
// itself; results are identical. CheckAnomaly makes every run look for the first NaN
// or infinity, naming the op, its tape position and the line that recorded it.
//
// # Gradients and parameters
//
// Backward walks the recipes from the loss to the parameters (and the tensors that
// keep a gradient: RetainGrad, SetRequiresGrad) and adds tensor.Grad's gradients to
// each parameter's gradient variable on the device, as PyTorch accumulates: ZeroGrad
// (or the optimizer's) clears them, and gradient accumulation over micro-batches is
// just several Backward calls. Detach is tensor.StopGradient, a free alias. Gradient
// rules are the engine's alone; ag adds none.
//
// Parameters are tensor.Variables resident on their tape's device. Optimizers record
// the engine's in-place update ops (OpSGDUpdate, OpAdamUpdate with Decoupled for
// AdamW, and tensor.RMSpropUpdate, a composition), with their state, step counter and
// learning rate in device variables; a scheduler changes the rate by writing one
// scalar, never by recompiling. Each parameter has a version, bumped by every run that
// writes it, which is what makes recomputation safe.
//
// # Capture
//
// Capture and CaptureStep record a function once per input signature and replay it as
// upload inputs, one compute, download the result; CaptureStep records the whole step
// (forward, Backward, clipping, the update). While the function records, reading a
// value, using host data that is not an argument, or a value computed outside it is
// an error naming the site: each would make a replay read back, upload, or reuse stale
// data. Dropout sites get a fresh seed at each replay, drawn from the tape in the same
// order a deferred loop draws them, so deferred, check-mode and captured training give
// the same weights.
//
// # Modules
//
// A model is any value with Forward(x *Tensor) *Tensor (Module). Parameters,
// NamedParameters, Buffers and SetTraining find what a model holds by walking its
// fields by reflection — exported or not, through pointers, slices, arrays, string-keyed
// maps and interfaces — so a struct of layers defined in a notebook cell needs no
// registration; paths are the field names in snake case, as PyTorch names attributes
// ("fc1.weight", "bn.running_mean"), which SaveModel and LoadModel use in the
// safetensors layout. A layer type whose name an op already has ends in Layer
// (Conv2DLayer, LayerNormLayer, RMSNormLayer, DropoutLayer); constructors are New plus
// the op's name (NewConv2D). The API is concrete (no generics), because the notebook's
// interpreter cannot export generic functions.
//
// # Errors
//
// As in PyTorch's API, ops and methods that compute report misuse (a shape mismatch,
// Backward on a non-scalar, the gradient of a tensor that has none) and failed runs by
// panicking with *Error, which names the op and, where Go reports one, the caller's
// file and line; in a notebook the cell shows it, with the cell line from the
// interpreter's traceback, and the kernel and the tape stay usable. Catch turns these
// panics into errors in programs. Functions that touch files or open devices (NewTape,
// FromNet, SaveModel, LoadModel) return errors.
//
// A tape serialises its own use with a mutex, but a training loop is meant to be
// driven from one goroutine; separate tapes (one per device) may run concurrently.
package ag

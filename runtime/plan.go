package runtime

import (
	"fmt"
	"time"

	"github.com/gml-dev/gml/tensor"
)

// Driving an executable step by step, as ggml drives a plan: Set or Bind the inputs
// once, Compute as often as needed (each Compute feeds what was set), Read outputs.

// Set gives input its data for the following Computes, until Set or Bind again. The
// tensor is read at each Compute (Keep it to upload it once).
func (e *Executable) Set(input *tensor.Node, t *tensor.Tensor) error {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if err := e.checkInput("Set", input); err != nil {
		return err
	}
	if t == nil || t.DType() != input.DType() || !t.Shape().Equal(input.Shape()) {
		return fmt.Errorf("runtime: Set: input %q wants %v%v, got %v", input.Name(), input.DType(), input.Shape(), describe(t))
	}
	delete(e.binds, input)
	e.feeds[input] = t
	return nil
}

func describe(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	return fmt.Sprintf("%v%v", t.DType(), t.Shape())
}

// Bind feeds input from a device buffer at every Compute, until Set or Bind again: the
// buffer's first bytes are copied into the input (on the device when both are on one
// device), after the buffer's asynchronous work completes. This is how data uploaded
// with DeviceBuffer.WriteAsync, while the device computed something else, enters a
// computation.
func (e *Executable) Bind(input *tensor.Node, buf *DeviceBuffer) error {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if err := e.checkInput("Bind", input); err != nil {
		return err
	}
	if buf == nil {
		return fmt.Errorf("runtime: Bind: input %q to a nil buffer", input.Name())
	}
	if buf.Size() < bytesOf(input) {
		return fmt.Errorf("runtime: Bind: input %q (%v%v, %s) to the smaller %v", input.Name(), input.DType(), input.Shape(), FormatBytes(bytesOf(input)), buf)
	}
	delete(e.feeds, input)
	e.binds[input] = buf
	return nil
}

func (e *Executable) checkInput(op string, input *tensor.Node) error {
	if err := e.check(op); err != nil {
		return err
	}
	for _, in := range e.inputs {
		if in == input {
			return nil
		}
	}
	return fmt.Errorf("runtime: %s: %v is not an input of this executable (inputs: %v)", op, input, e.inputs)
}

// Compute runs the executable on what Set and Bind gave its inputs, leaving the outputs
// on their devices for Read.
func (e *Executable) Compute() error {
	if err := Interrupted(); err != nil {
		return err
	}
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	return e.run(e.feeds, e.binds)
}

// ComputeAsync starts Compute and returns at once; the event completes when the outputs
// are readable. On a device that can (one segment on a GPU), the inputs are fed and
// the prepared work submitted before it returns, and the device computes while the
// host, or the device's transfer queue, does other work; elsewhere Compute runs on a
// goroutine. The executable must not be changed (Set, Bind) or run again until the
// event completes; Read waits for it.
func (e *Executable) ComputeAsync() (*Event, error) {
	if err := Interrupted(); err != nil {
		return nil, err
	}
	r := e.r
	r.mu.Lock()
	if len(e.progs) == 1 && len(e.place.pre[0]) == 0 {
		if ap, ok := e.progs[0].(AsyncProgram); ok && r.prof == nil {
			defer r.mu.Unlock()
			if err := e.check("ComputeAsync"); err != nil {
				return nil, err
			}
			if err := e.feed(e.feeds, e.binds, activeTimeline()); err != nil {
				return nil, err
			}
			start := time.Now()
			c, err := ap.Start()
			if err != nil {
				return nil, fmt.Errorf("runtime: %s: %w", e.segs[0].backend.Name(), err)
			}
			ev := newEvent("compute", backendID(e.segs[0].backend), 0, c, start, nil)
			e.pending = ev
			return ev, nil
		}
	}
	// The run records its segments on the timeline itself; the event stays off it.
	ev := &Event{kind: "compute", device: backendID(e.preferred()), submitted: time.Now(), c: goWork(e.Compute)}
	e.pending = ev
	r.mu.Unlock()
	return ev, nil
}

// preferred is the backend of the executable's last segment, where its outputs are.
func (e *Executable) preferred() Backend {
	if len(e.segs) == 0 {
		return e.r.cpu
	}
	return e.segs[len(e.segs)-1].backend
}

// Read downloads output n (one of the nodes the executable was compiled for) as the
// last Compute or Run left it, after a ComputeAsync in flight completes.
func (e *Executable) Read(n *tensor.Node) (*tensor.Tensor, error) {
	e.r.mu.Lock()
	ev := e.pending
	e.r.mu.Unlock()
	if ev != nil {
		if err := ev.Synchronize(); err != nil {
			return nil, err
		}
	}
	for i, o := range e.outputs {
		if o == n {
			return e.Output(i)
		}
	}
	return nil, fmt.Errorf("runtime: Read: %v is not an output of this executable (outputs: %v)", n, e.outputs)
}

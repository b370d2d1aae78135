package nn

import (
	"errors"
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// DataParallel trains the model on several devices at once (a Compile option): one
// replica per device, each training step's batch split by rows across them, the
// gradients summed between them (an all-reduce through the host) and every replica
// applying the same update, so the replicas' weights are identical after every step
// and equal, within float32 rounding, to one device's (batch statistics, such as
// BatchNorm's, are taken over the whole batch). Devices are runtime device
// queries ("vulkan:0", "vulkan:1", "cpu"); naming one device several times makes
// replicas of it, and GML_VK_DEVICES=0,0 lists one GPU twice as two devices. An op
// that cannot take a slice of the batch (dropout, whose mask follows each element's
// place in the whole batch) gets the whole batch gathered in every replica, so the step
// still equals one device's, but what follows it is computed in every replica.
// Evaluate and Predict run on the model's own device; the weights the replicas train
// are brought back there whenever they are read. A Trainer with gradient accumulation
// is refused.
func DataParallel(devices ...string) CompileOption {
	return compileOption("DataParallel", func(s *compileSettings) error {
		if len(devices) == 0 {
			return errors.New("DataParallel needs at least one device")
		}
		for _, d := range devices {
			if _, err := runtime.FindDevice(d); err != nil {
				return err
			}
		}
		s.parallel = append([]string(nil), devices...)
		return nil
	})
}

// replicas is a compiled model's data-parallel state: the meta device over the
// replicas' devices and where the current weights are.
type replicas struct {
	devices []string
	meta    *runtime.Meta
	vars    []*tensor.Variable // every variable the training graphs read or update
	known   map[*tensor.Variable]bool
	ahead   bool // the replicas have trained past the model's runtime
	stale   bool // the model's runtime may hold newer weights than the replicas
}

// open makes the meta device on first use.
func (r *replicas) open() (*runtime.Meta, error) {
	if r.meta != nil {
		return r.meta, nil
	}
	devs := make([]*runtime.PhysicalDevice, len(r.devices))
	for i, q := range r.devices {
		d, err := runtime.FindDevice(q)
		if err != nil {
			return nil, fmt.Errorf("nn: DataParallel: %w", err)
		}
		devs[i] = d
	}
	m, err := runtime.NewMeta(devs)
	if err != nil {
		return nil, fmt.Errorf("nn: DataParallel: %w", err)
	}
	r.meta, r.stale = m, true
	return m, nil
}

// compile compiles a training graph over the replicas, splitting the data inputs (the
// batch) and nothing else, and records the variables it touches.
func (r *replicas) compile(p *program, fetch []*tensor.Node) (*runtime.MetaExecutable, error) {
	m, err := r.open()
	if err != nil {
		return nil, err
	}
	data := map[*tensor.Node]bool{}
	for _, group := range [][]*tensor.Node{p.xs, p.ys, p.ws} {
		for _, n := range group {
			if n != nil {
				data[n] = true
			}
		}
	}
	if r.known == nil {
		r.known = map[*tensor.Variable]bool{}
	}
	for _, n := range fetch[0].Graph().Nodes() {
		if v := n.Variable(); v != nil && !r.known[v] {
			r.known[v] = true
			r.vars = append(r.vars, v)
		}
	}
	r.stale = true // variables new to the replicas start from the model's values
	split := func(n *tensor.Node) (int, bool) { return 0, data[n] }
	return m.CompileSplit(fetch, split)
}

// push copies the model runtime's weights to every replica when they may differ.
func (r *replicas) push(rt *runtime.Runtime) error {
	if !r.stale {
		return nil
	}
	for _, v := range r.vars {
		t, err := rt.Read(v)
		if err != nil {
			return err
		}
		if err := r.meta.Write(v, t); err != nil {
			return err
		}
	}
	r.stale = false
	return nil
}

// pull copies the replicas' weights (the first's: they are identical) back to the
// model's runtime when they have trained past it.
func (r *replicas) pull(rt *runtime.Runtime) error {
	if !r.ahead || r.meta == nil {
		return nil
	}
	for _, v := range r.vars {
		reps, err := r.meta.Replicas(v)
		if err != nil {
			return err
		}
		if err := rt.Write(v, reps[0]); err != nil {
			return err
		}
	}
	r.ahead = false
	return nil
}

// close frees the meta device, after bringing its weights back.
func (r *replicas) close(rt *runtime.Runtime) error {
	if r.meta == nil {
		return nil
	}
	err := r.pull(rt)
	r.meta.Close()
	r.meta, r.vars, r.known, r.ahead = nil, nil, nil, false
	return err
}

// Replicas returns the current value of a model variable on every replica of a model
// compiled with DataParallel (identical after every step), by variable name.
func (m *Net) Replicas(name string) ([]*tensor.Tensor, error) {
	if m.comp == nil || m.comp.par == nil {
		return nil, errors.New("nn: Replicas: the model is not compiled with DataParallel")
	}
	if m.comp.par.meta == nil {
		return nil, errors.New("nn: Replicas: the model has not trained yet")
	}
	for _, v := range m.comp.par.vars {
		if v.Name() == name {
			return m.comp.par.meta.Replicas(v)
		}
	}
	return nil, fmt.Errorf("nn: Replicas: no variable %q in the training graph", name)
}

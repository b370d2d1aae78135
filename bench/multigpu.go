package bench

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("multigpu", "data- and tensor-parallel throughput over N devices (a runtime meta device) against one device; devices counts the distinct physical devices used", benchMultiGPU)
}

// The multigpu benchmark runs a graph-level MLP (dense layers of width units, ReLU, a
// mean-squared-error loss and an SGD update) on a meta device:
//   - dp: a training step with the batch's rows split across the parts, the gradients
//     summed between them and every part updating its own copy of the weights;
//   - tp: the forward pass with the layers' weights split Megatron-style (a layer's
//     columns, then the next layer's rows, one all-reduce per pair);
//   - pp: the forward pass as a pipeline, the layers divided into one stage per part,
//     the batch into micro-batches;
//   - tpxdp: the dp training step over groups of two parts, the batch split between
//     the groups and each group splitting the weights as tp does (4 parts or more);
//   - nn: nn training steps (Adam, the workloads of bench nn: -nn-cases) compiled
//     with nn.DataParallel over the parts, against the model on one device.
//
// Parts go round robin over the listed devices (GML_VK_DEVICES chooses them; a device
// listed twice is opened twice). Each line says how many parts ran and on how many
// distinct physical devices: parts on one device are replicas, which test the code
// paths but cannot be faster than the device alone.
func benchMultiGPU(args []string) error {
	fs := flag.NewFlagSet("bench multigpu", flag.ContinueOnError)
	device := fs.String("device", "gpu", "gpu (every listed Vulkan device) or cpu")
	partsFlag := fs.String("parts", "1,2,4,8", "part counts to measure")
	units := fs.Int("units", 4096, "layer width")
	layers := fs.Int("layers", 4, "hidden layers")
	batch := fs.Int("batch", 1024, "rows per step")
	minTime := fs.Duration("time", 2*time.Second, "least time measured per case")
	modes := fs.String("modes", "dp,tp,pp,tpxdp,nn", "dp, tp, pp, tpxdp, nn")
	nnCases := fs.String("nn-cases", "mlp4096x4_b1024,transformer_d128_h8_L4_seq64_b32", "bench nn workloads the nn mode trains")
	micro := fs.Int("micro", 4, "micro-batches per batch (pp)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	devs, err := benchDevices(*device)
	if err != nil {
		return err
	}
	var counts []int
	for _, s := range strings.Split(*partsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("-parts %q: want positive counts", *partsFlag)
		}
		counts = append(counts, n)
	}
	if *units < 1 || *layers < 1 || *batch < 1 {
		return fmt.Errorf("-units, -layers and -batch must be positive")
	}
	for _, mode := range strings.Split(*modes, ",") {
		if mode == "nn" {
			if err := benchNNParallel(*device, devs, counts, strings.Split(*nnCases, ","), *minTime); err != nil {
				return err
			}
			continue
		}
		if mode != "dp" && mode != "tp" && mode != "pp" && mode != "tpxdp" {
			return fmt.Errorf("-modes: unknown mode %q (dp, tp, pp, tpxdp, nn)", mode)
		}
		var base float64
		for _, n := range counts {
			parts := make([]*runtime.PhysicalDevice, n)
			for i := range parts {
				parts[i] = devs[i%len(devs)]
			}
			if mode == "tpxdp" && n > 1 && (n < 4 || n%2 != 0) {
				fmt.Fprintf(os.Stderr, "gml bench multigpu: tpxdp runs groups of 2 on 4, 6, 8... parts; %d skipped\n", n)
				continue
			}
			if mode == "pp" && n > *layers {
				fmt.Fprintf(os.Stderr, "gml bench multigpu: pp over %d parts needs at least %d layers (-layers); skipped\n", n, n)
				continue
			}
			rate, err := timeMeta(mode, parts, *units, *layers, *batch, *micro, *minTime)
			if err != nil {
				return fmt.Errorf("%s over %d parts: %w", mode, n, err)
			}
			name := fmt.Sprintf("%s_mlp%dx%d_b%d_parts%d", mode, *units, *layers, *batch, n)
			if mode == "pp" {
				name += fmt.Sprintf("_micro%d", *micro)
			}
			base = emitParallel(name, parts, rate, base)
		}
	}
	return nil
}

// emitParallel prints a line for rate over parts, compared with base (the one-part
// rate, which it returns; a one-part line sets it).
func emitParallel(name string, parts []*runtime.PhysicalDevice, rate, base float64) float64 {
	ids, physical := map[string]bool{}, map[string]bool{}
	for _, d := range parts {
		ids[d.ID()] = true
		// vulkan:0 and vulkan:0#2 are one physical device opened twice.
		physical[fmt.Sprintf("%s:%d", d.Info().Backend, d.Info().Index)] = true
	}
	r := result{Bench: "multigpu", Case: name, Device: strings.Join(slices.Sorted(maps.Keys(ids)), "+"),
		Devices: len(physical), Parts: len(parts), Value: round(rate, 1), Unit: "samples/s"}
	if len(parts) == 1 {
		base = rate
	} else if base > 0 {
		r.Ref, r.RefValue, r.Ratio = "1 part on "+parts[0].ID(), round(base, 1), round(rate/base, 3)
	}
	emit(r)
	return base
}

// benchNNParallel times nn training steps of the named workloads over each count of
// parts (nn.DataParallel; one part is the model alone on the device).
func benchNNParallel(device string, devs []*runtime.PhysicalDevice, counts []int, cases []string, minTime time.Duration) error {
	for _, name := range cases {
		i := slices.IndexFunc(nnWorkloads, func(w nnWorkload) bool { return w.name == strings.TrimSpace(name) })
		if i < 0 {
			return fmt.Errorf("-nn-cases: no workload %q", name)
		}
		w := nnWorkloads[i]
		var base float64
		for _, n := range counts {
			parts := make([]*runtime.PhysicalDevice, n)
			ids := make([]string, n)
			for k := range parts {
				parts[k] = devs[k%len(devs)]
				ids[k] = parts[k].ID()
			}
			rate, err := timeNNParallel(w, device, ids, minTime)
			if err != nil {
				return fmt.Errorf("nn %s over %d parts: %w", w.name, n, err)
			}
			base = emitParallel("nn_dp_"+w.name+fmt.Sprintf("_parts%d", n), parts, rate, base)
		}
	}
	return nil
}

// timeNNParallel returns samples per second of Trainer steps on w's batch, the model
// compiled with nn.DataParallel(ids...) when there are several.
func timeNNParallel(w nnWorkload, device string, ids []string, minTime time.Duration) (float64, error) {
	nn.SetSeed(1)
	m := w.build()
	opts := []nn.CompileOption{nn.Loss("sparse_categorical_crossentropy"), nn.Device(device)}
	if len(ids) > 1 {
		opts = append(opts, nn.DataParallel(ids...))
	}
	if err := m.Compile(nn.Adam(1e-3), opts...); err != nil {
		return 0, err
	}
	defer m.Free()
	tr, err := m.NewTrainer()
	if err != nil {
		return 0, err
	}
	x, y := w.data(rand.New(rand.NewPCG(1, 2)))
	for range 2 {
		if _, err := tr.Step(x, y); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	steps := 0
	for time.Since(start) < minTime || steps < 3 {
		if _, err := tr.Step(x, y); err != nil {
			return 0, err
		}
		steps++
	}
	return float64(x.Shape()[0]*steps) / time.Since(start).Seconds(), nil
}

// benchDevices lists the devices parts go to: every listed Vulkan device, or the CPU.
func benchDevices(kind string) ([]*runtime.PhysicalDevice, error) {
	var out []*runtime.PhysicalDevice
	list := runtime.Devices()
	for _, d := range list.Devices {
		if (kind == "cpu") == (d.Type() == runtime.CPU) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-device %s: no such device (%v)", kind, list.Errors)
	}
	return out, nil
}

// timeMeta builds the mode's graph, compiles it over parts, warms up and returns samples
// per second over at least minTime.
func timeMeta(mode string, parts []*runtime.PhysicalDevice, units, layers, batch, micro int, minTime time.Duration) (float64, error) {
	g := tensor.NewGraph()
	rng := rand.New(rand.NewPCG(1, 2))
	x := g.Input("x", tensor.F32, batch, units)
	target := g.Input("target", tensor.F32, batch, units)
	h := x
	var ws, acts []*tensor.Node
	split := map[*tensor.Variable]int{}
	for i := range layers {
		w := tensor.NewVariable(fmt.Sprintf("w%d", i), randomTensor(rng, 1/float64(units), units, units))
		wn := g.Var(w)
		ws = append(ws, wn)
		split[w] = 1 - i%2 // columns, then rows: Megatron pairs
		h = tensor.MatMul(h, wn)
		if i < layers-1 {
			h = tensor.Relu(h)
		}
		acts = append(acts, h)
	}
	outputs := []*tensor.Node{h}
	opts := []runtime.MetaOption{}
	feeds := map[*tensor.Node]*tensor.Tensor{x: randomTensor(rng, 1, batch, units)}
	if mode == "dp" || mode == "tpxdp" {
		loss := tensor.Mean(tensor.Square(tensor.Sub(h, target)), nil, false)
		outputs = []*tensor.Node{loss}
		for i, gr := range tensor.Grad(loss, ws) {
			outputs = append(outputs, tensor.Assign(ws[i], tensor.Sub(ws[i], tensor.MulScalar(gr, 1e-3))))
		}
		feeds[target] = randomTensor(rng, 1, batch, units)
	}
	megatron := runtime.SplitBy(func(n *tensor.Node) (int, bool) {
		ax, ok := split[n.Variable()]
		return ax, ok
	})
	if mode == "tp" {
		opts = append(opts, megatron)
	}
	var e interface {
		Run(map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error)
	}
	if mode == "pp" {
		// Stage k ends after layer (k+1)*layers/parts.
		var cuts []*tensor.Node
		for k := 1; k < len(parts); k++ {
			cuts = append(cuts, acts[k*layers/len(parts)-1])
		}
		pl, err := runtime.NewPipeline(parts, outputs, cuts, micro)
		if err != nil {
			return 0, err
		}
		defer pl.Close()
		e = pl
	} else {
		var m *runtime.Meta
		var err error
		if mode == "tpxdp" && len(parts) > 1 {
			var groups []*runtime.Meta
			for k := 0; k < len(parts); k += 2 {
				g, err := runtime.NewMeta(parts[k:k+2], megatron)
				if err != nil {
					return 0, err
				}
				groups = append(groups, g)
			}
			m, err = runtime.NewMetaOfGroups(groups)
		} else {
			m, err = runtime.NewMeta(parts, opts...)
		}
		if err != nil {
			return 0, err
		}
		defer m.Close()
		me, err := m.Compile(outputs)
		if err != nil {
			return 0, err
		}
		defer me.Free()
		e = me
	}
	for range 2 {
		if _, err := e.Run(feeds); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	steps := 0
	for time.Since(start) < minTime || steps < 3 {
		if _, err := e.Run(feeds); err != nil {
			return 0, err
		}
		steps++
	}
	return float64(batch*steps) / time.Since(start).Seconds(), nil
}

// randomTensor is an F32 tensor of values uniform in [-scale, scale).
func randomTensor(r *rand.Rand, scale float64, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.F32, shape...)
	v := t.Float32s()
	for i := range v {
		v[i] = float32(scale * (2*r.Float64() - 1))
	}
	return t
}

package main

// mutation is one realistic bug: exact snippets of files and their replacements, the
// packages whose tests should catch it, and, for GLSL sources, regen to recompile the
// SPIR-V. Keep the list growing: when a bug is fixed, add it here.
type mutation struct {
	name  string
	area  string // tensor, runtime/cpu, gpu, nn, kernel
	about string
	edits []edit
	pkgs  []string
	run   string // go test -run, to keep a slow package short (optional)
	regen bool
}

// edit replaces the one occurrence of old in file (a path from the repository root).
type edit struct{ file, old, new string }

// The packages each kind of mutation runs: those whose tests can see the change (a
// package below the mutated one, such as runtime/cpu/gemm under runtime/cpu, cannot),
// so a run stays minutes long on a loaded machine. ./shaders is in none: its tests
// check that generated files are fresh, which a regenerated mutation keeps true.
var (
	gradPkgs   = []string{"./tensor", "./internal/backendtest"}                  // gradient rules: the float64 reference and every backend
	shapePkgs  = []string{"./tensor", "./runtime/cpu", "./internal/backendtest"} // shape rules and the kernels following them
	cpuPkgs    = []string{"./runtime/cpu", "./internal/backendtest", "./nn"}
	gpuPkgs    = []string{"./gpu", "./internal/backendtest", "./nn"}
	nnPkgs     = []string{"./nn"}
	kernelPkgs = []string{"./kernel"} // the protocol logic, with a fake executor: seconds
	wirePkgs   = []string{"./kernel/wire", "./kernel"}
)

var mutations = []mutation{
	// The planted bugs of issue 22.
	{name: "softmax_no_max_subtraction", area: "runtime/cpu", about: "CPU softmax exponentiates without subtracting the row maximum (a logit of 100 overflows)",
		edits: []edit{
			{"runtime/cpu/kernels_norm.go", "\t\t\t\tm = max(m, z)", "\t\t\t\tm = 0"},   // short rows
			{"runtime/cpu/kernels_norm.go", "{\n\t\t\tm = max(m, z)", "{\n\t\t\tm = 0"}, // strided rows
			{"runtime/cpu/kernels_norm.go", "m = vec.Max(y)", "m = 0"},                  // contiguous rows
		}, pkgs: cpuPkgs},
	{name: "gpu_adam_drops_l2_decay", area: "gpu", about: "the optimizer shader drops Adam's L2 weight decay",
		edits: []edit{{"shaders/src/training_optim.comp", "if (!DECOUPLED) gi += p.wd * pi;", ""}}, pkgs: gpuPkgs, regen: true},
	{name: "max_min_grad_ties_not_split", area: "tensor", about: "the Max/Min reduction gradient goes whole to every tied position",
		edits: []edit{{"tensor/grad_reduce.go", "count := Sum(hit, at.Axes, true)", "count := Max(hit, at.Axes, true)"}}, pkgs: gradPkgs},
	{name: "accuracy_greater_equal", area: "nn", about: "the accuracy metric counts argmax >= label instead of ==",
		edits: []edit{{"nn/losses.go", "hit = tensor.Equal(tensor.ArgMax(scores, -1, false), flatLabels(y))", "hit = tensor.GreaterEqual(tensor.ArgMax(scores, -1, false), flatLabels(y))"}}, pkgs: nnPkgs},
	{name: "cpu_adam_eps_inside_sqrt", area: "runtime/cpu", about: "CPU Adam divides by sqrt(v+eps) instead of sqrt(v)+eps",
		edits: []edit{{"runtime/cpu/vec/adam.go", "/(float32(math.Sqrt(float64(float32(vi*c2))))+eps)", "/float32(math.Sqrt(float64(float32(vi*c2)+eps)))"}}, pkgs: append([]string{"./runtime/cpu/vec"}, cpuPkgs...)},
	{name: "hmac_without_metadata", area: "kernel", about: "the message signature leaves the metadata frame out",
		edits: []edit{{"kernel/wire/sign.go", "h.Write(metadata)", ""}}, pkgs: wirePkgs},

	// tensor: shape and gradient rules.
	{name: "maximum_grad_tie_not_split", area: "tensor", about: "Maximum/Minimum give the whole gradient to the first input at a tie instead of half to each",
		edits: []edit{{"tensor/grad_elementwise.go", "Where(Equal(a, b), scalarLike(n, 0.5), scalarLike(n, 0))", "Where(Equal(a, b), scalarLike(n, 1), scalarLike(n, 0))"}}, pkgs: gradPkgs},
	{name: "sub_grad_sign", area: "tensor", about: "the gradient of a-b with respect to b has the wrong sign",
		edits: []edit{{"tensor/grad_elementwise.go", "unbroadcast(gy, n.inputs[0]), unbroadcast(Neg(gy), n.inputs[1])", "unbroadcast(gy, n.inputs[0]), unbroadcast(gy, n.inputs[1])"}}, pkgs: gradPkgs},
	{name: "div_grad_sign", area: "tensor", about: "the gradient of a/b with respect to b has the wrong sign",
		edits: []edit{{"tensor/grad_elementwise.go", "unbroadcast(Neg(Div(Mul(gy, n), b)), b)", "unbroadcast(Div(Mul(gy, n), b), b)"}}, pkgs: gradPkgs},
	{name: "relu_grad_at_zero", area: "tensor", about: "relu passes the gradient at exactly 0 (the documented one-sided value is 0)",
		edits: []edit{{"tensor/grad_elementwise.go", "return []*Node{Where(Greater(n.inputs[0], scalarLike(n, 0)), gy, scalarLike(n, 0))}", "return []*Node{Where(GreaterEqual(n.inputs[0], scalarLike(n, 0)), gy, scalarLike(n, 0))}"}}, pkgs: gradPkgs},
	{name: "clamp_grad_excludes_limits", area: "tensor", about: "clamp blocks the gradient at its limits (documented: limits included)",
		edits: []edit{{"tensor/grad_elementwise.go", "inside := And(GreaterEqual(x, scalarLike(n, float64(at.Min))), LessEqual(x, scalarLike(n, float64(at.Max))))", "inside := And(Greater(x, scalarLike(n, float64(at.Min))), Less(x, scalarLike(n, float64(at.Max))))"}}, pkgs: gradPkgs},
	{name: "slice_negative_step_length", area: "tensor", about: "a slice with a negative step loses its last element (off by one)",
		edits: []edit{{"tensor/ops_layout.go", "return max(0, (start-end-step-1)/(-step))", "return max(0, (start-end)/(-step))"}}, pkgs: shapePkgs},
	{name: "permute_grad_not_inverted", area: "tensor", about: "the gradient of a permutation permutes again instead of inverting",
		edits: []edit{{"tensor/grad_layout.go", "return []*Node{Apply(OpPermute, PermuteAttr{Perm: inv}, gy)}", "return []*Node{Apply(OpPermute, PermuteAttr{Perm: perm}, gy)}"}}, pkgs: gradPkgs},

	{name: "hard_sigmoid_grad_edges_included", area: "tensor", about: "hard sigmoid passes the gradient at the edges where it turns flat",
		edits: []edit{{"tensor/grad_elementwise.go", "inside := And(Greater(z, scalarLike(n, 0)), Less(z, scalarLike(n, 1)))", "inside := And(GreaterEqual(z, scalarLike(n, 0)), LessEqual(z, scalarLike(n, 1)))"}}, pkgs: gradPkgs},
	// runtime/cpu: kernels.
	{name: "broadcast_stride_of_size_one_axis", area: "runtime/cpu", about: "a broadcast (size-1) axis is read with its stride instead of 0",
		edits: []edit{{"runtime/cpu/broadcast.go", "if j := i - off; j >= 0 && src[j] != 1 {", "if j := i - off; j >= 0 {"}}, pkgs: cpuPkgs},
	{name: "matmul_transb_ignored", area: "runtime/cpu", about: "the batched-rows product path ignores TransB",
		edits: []edit{{"runtime/cpu/kernels_matmul.go", "g.m *= batch.Size()", "g.m, g.transB = g.m*batch.Size(), false"}}, pkgs: cpuPkgs},
	{name: "layernorm_eps_outside_sqrt", area: "runtime/cpu", about: "layer norm divides by sqrt(var)+eps instead of sqrt(var+eps)",
		edits: []edit{{"runtime/cpu/kernels_norm.go", "inv := 1 / math.Sqrt(vec.SqDev(x, mean)/float64(inner)+eps)", "inv := 1 / (math.Sqrt(vec.SqDev(x, mean)/float64(inner)) + eps)"}}, pkgs: cpuPkgs},
	{name: "pad_reflect_off_by_one", area: "runtime/cpu", about: "reflect padding past the end repeats the edge (symmetric instead of reflect)",
		edits: []edit{{"runtime/cpu/kernels_layout.go", "s = 2*(d-1) - s", "s = 2*d - 1 - s"}}, pkgs: cpuPkgs},
	{name: "variance_correction_ignored", area: "runtime/cpu", about: "the variance over axes divides by n whatever the correction",
		edits: []edit{{"runtime/cpu/kernels_reduce.go", "d[p] = float32(acc[p] / float64(r-correction))", "d[p] = float32(acc[p] / float64(r))"}}, pkgs: cpuPkgs},
	{name: "cpu_dropout_scale", area: "runtime/cpu", about: "CPU dropout scales kept values by 1-rate instead of 1/(1-rate)",
		edits: []edit{{"runtime/cpu/kernels_training.go", "scale := float32(1 / (1 - float64(rate)))", "scale := float32(1 - float64(rate))"}}, pkgs: cpuPkgs},
	{name: "conv_asymmetric_padding", area: "runtime/cpu", about: "convolution pads the bottom like the top (asymmetric padding lost)",
		edits: []edit{{"runtime/cpu/kernels_conv.go", "p.PadTop, p.PadBottom = at.PadBegin[0], at.PadEnd[0]", "p.PadTop, p.PadBottom = at.PadBegin[0], at.PadBegin[0]"}}, pkgs: cpuPkgs},

	{name: "cpu_argmax_ties_last", area: "runtime/cpu", about: "CPU ArgMax takes the last of tied maxima instead of the first",
		edits: []edit{{"runtime/cpu/kernels_reduce.go", "(isMax && v > best)", "(isMax && v >= best)"}}, pkgs: cpuPkgs},
	// gpu and shaders.
	{name: "gpu_softmax_no_max_subtraction", area: "gpu", about: "the softmax shader exponentiates without subtracting the row maximum",
		edits: []edit{{"shaders/src/norm_softmax.comp", "m = max(m, v);", "m = 0.0;"}}, pkgs: gpuPkgs, regen: true},
	{name: "gpu_norm_eps_dropped", area: "gpu", about: "the norm shader forgets eps (a constant row divides by 0)",
		edits: []edit{{"shaders/src/norm.comp", "inversesqrt(reduceSum(q) / float(p.n) + p.eps)", "inversesqrt(reduceSum(q) / float(p.n))"}}, pkgs: gpuPkgs, regen: true},
	{name: "gpu_gelu_tanh_constant", area: "gpu", about: "a typo in the tanh-GELU constant of the elementwise shader (0.04715)",
		edits: []edit{{"shaders/src/elementwise.comp", "SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)", "SQRT_2_OVER_PI * (x + 0.04715 * x * x * x)"}}, pkgs: gpuPkgs, regen: true},
	{name: "gpu_dropout_scale", area: "gpu", about: "GPU dropout scales kept values by 1-rate instead of 1/(1-rate)",
		edits: []edit{{"gpu/ops_training.go", "scale := float32(1 / (1 - float64(rate)))", "scale := float32(1 - float64(rate))"}}, pkgs: gpuPkgs},
	{name: "gpu_sgd_nesterov_ignored", area: "gpu", about: "the GPU optimizer ignores SGD's Nesterov flag",
		edits: []edit{{"gpu/ops_training.go", "mu, wd, nesterov = at.Momentum, at.WeightDecay, at.Nesterov", "mu, wd, nesterov = at.Momentum, at.WeightDecay, false"}}, pkgs: gpuPkgs},
	{name: "gpu_optim_push_eps_wd_swapped", area: "gpu", about: "the optimizer's push constants pass weight decay where eps belongs and back",
		edits: []edit{{"gpu/ops_training.go", "math.Float32bits(b1), math.Float32bits(b2), math.Float32bits(eps), math.Float32bits(wd)", "math.Float32bits(b1), math.Float32bits(b2), math.Float32bits(wd), math.Float32bits(eps)"}}, pkgs: gpuPkgs},

	{name: "gpu_reduce_tree_stops_early", area: "gpu", about: "the reduction shader's tree stops one level early, so part[1] never joins part[0]",
		edits: []edit{{"shaders/src/reduce.comp", "for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {", "for (uint s = gl_WorkGroupSize.x / 2; s > 1; s >>= 1) {"}}, pkgs: gpuPkgs, regen: true},
	// nn.
	{name: "sigmoid_accuracy_threshold", area: "nn", about: "binary accuracy thresholds a sigmoid head's logits at 0.5 instead of 0",
		edits: []edit{{"nn/losses.go", "threshold = 0", "threshold = 0.5"}}, pkgs: nnPkgs},
	{name: "batchnorm_momentum_swapped", area: "nn", about: "batch norm's moving averages weight the batch by the momentum and the history by 1-momentum",
		edits: []edit{{"nn/layers_norm.go", "tensor.MulScalar(old, m), tensor.MulScalar(tensor.Reshape(batch, old.Shape()...), 1-m)", "tensor.MulScalar(old, 1-m), tensor.MulScalar(tensor.Reshape(batch, old.Shape()...), m)"}}, pkgs: nnPkgs},
	{name: "evaluate_mean_of_batch_means", area: "nn", about: "Evaluate averages batch means, overweighting a short last batch",
		edits: []edit{{"nn/fit.go", "a.sums[i] += v * float64(n)", "a.sums[i] += v"}, {"nn/fit.go", "a.n += n", "a.n++"}}, pkgs: nnPkgs},
	{name: "dropout_rate_as_keep_probability", area: "nn", about: "the Dropout layer passes its rate where the keep probability belongs",
		edits: []edit{{"nn/layers_core.go", "return tensor.Dropout(x, c.dropoutSeed(), float32(rate))", "return tensor.Dropout(x, c.dropoutSeed(), float32(1-rate))"}}, pkgs: nnPkgs},
	{name: "loss_weights_ignored", area: "nn", about: "LossWeights is accepted and ignored",
		edits: []edit{{"nn/compile.go", "copy(weights, s.lossWeights)", ""}}, pkgs: nnPkgs},
	{name: "validation_split_trains_on_all", area: "nn", about: "ValidationSplit validates on samples it also trains on",
		edits: []edit{{"nn/fit.go", "if train, err = all.split(0, cut); err != nil {", "if train, err = all.split(0, all.n); err != nil {"}}, pkgs: nnPkgs},
	{name: "early_stopping_patience_not_reset", area: "nn", about: "EarlyStopping does not reset its patience after an improvement",
		edits: []edit{{"nn/callbacks.go", "e.wait = 0", ""}}, pkgs: nnPkgs},

	// kernel.
	{name: "silent_request_counts", area: "kernel", about: "a silent execute_request increments the execution count",
		edits: []edit{{"kernel/execute.go", "req.StoreHistory = false", ""}}, pkgs: kernelPkgs},
	{name: "error_reply_status_ok", area: "kernel", about: "a failed cell's execute_reply says status ok",
		edits: []edit{{"kernel/execute.go", `reply.Status, reply.Error = "error", e`, "reply.Error = e"}}, pkgs: kernelPkgs},
	{name: "stop_on_error_after_success", area: "kernel", about: "stop_on_error aborts the queued requests after a cell that succeeded",
		edits: []edit{{"kernel/execute.go", "if res.Err != nil && req.StopOnError {", "if req.StopOnError {"}}, pkgs: kernelPkgs},
	{name: "is_complete_indent_lost", area: "kernel", about: "is_complete answers an open bracket without the next line's indent",
		edits: []edit{{"kernel/exec/iscomplete.go", "case strings.HasPrefix(be.msg, \"unclosed\"):\n\t\t\treturn \"incomplete\", lead + \"    \"", "case strings.HasPrefix(be.msg, \"unclosed\"):\n\t\t\treturn \"incomplete\", lead"}},
		pkgs:  []string{"./kernel/exec"}, run: "Complete"},
	{name: "wire_truncated_signature_accepted", area: "kernel", about: "Verify compares only as many bytes as the signature has, so an empty or truncated one passes",
		edits: []edit{{"kernel/wire/sign.go", "err != nil || len(got) != sha256.Size {", "err != nil {"}, {"kernel/wire/sign.go", "return hmac.Equal(got, s.mac(header, parent, metadata, content))", "return hmac.Equal(got, s.mac(header, parent, metadata, content)[:len(got)])"}}, pkgs: wirePkgs},
}

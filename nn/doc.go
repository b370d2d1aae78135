// Package nn is gml's Keras-like compiled API: stack layers (Sequential) or connect them
// (Model over Input nodes), Compile with an optimizer, losses and metrics, then Fit,
// Evaluate and Predict.
//
//	m := nn.Sequential(
//		nn.Flatten(nn.InputShape(28, 28)),
//		nn.Dense(128, nn.Activation("relu")),
//		nn.Dropout(0.3),
//		nn.Dense(10, nn.Activation("softmax")))
//	m.Compile(nn.Adam(1e-3), nn.Loss("sparse_categorical_crossentropy"), nn.Metrics("accuracy"))
//	hist, err := m.Fit(x, y, nn.Epochs(5), nn.BatchSize(32), nn.ValidationSplit(0.1))
//
// # How it runs
//
// A model is one static graph. For each batch size it meets, Fit builds one training
// graph on the engine — the forward pass, the backward pass from tensor.Grad, and an
// optimizer update per weight (AdamUpdate, SGDUpdate writing the weight and its moments
// in place) — compiles it once with the runtime and runs it once per step. Only the loss
// and metric scalars come back to the host. The learning rate and the step number are
// runtime variables (the graph advances the step itself, the rate is written when it
// changes) and each dropout site has a seed input fed per step, so SetLR, schedules and
// ReduceLROnPlateau never recompile and no other host data crosses per step. The last,
// shorter batch of an epoch gets a graph of its own, compiled once and cached with the
// others; evaluation and prediction graphs are cached the same way.
//
// Weights are tensor.Variables: they live in the runtime's device buffers across steps,
// graphs of different batch sizes, and notebook cells. Layers create them lazily, the
// first time they are applied, from the input shape (the batch axis is never part of a
// layer's shapes). One layer object applied to several nodes shares its weights.
//
// # Decisions
//
//   - Data is channels-first by default, as in the engine and PyTorch: Conv2D takes
//     (channels, height, width) samples and Conv1D (channels, width). A Fashion-MNIST
//     image is a (1, 28, 28) sample; Fit reshapes inputs whose sample size matches the
//     model input, so (N, 28, 28) images feed a (1, 28, 28) input directly. The
//     ChannelsLast option makes Conv1D, Conv2D and the pooling layers take Keras's
//     layout instead ((28, 28, 1) images, output (height, width, filters)): the layer
//     permutes to channels-first around the engine's kernels, and its weights keep the
//     same shapes, so convolution weights carry over between layouts (a Flatten after
//     them orders the features differently, though). BatchNorm
//     takes Axis(-1) for channels-last data. A channels-first convolution that meets a
//     sample smaller than its window says to pass ChannelsLast.
//   - User-defined layers: a CustomLayer (Build declares weights by name through a
//     Builder, Call emits ops on tensor nodes through a Forward) becomes a Layer with
//     Custom(kind, impl), and Lambda wraps a weightless function. Only exported methods
//     are involved, so a type defined in a notebook cell implements CustomLayer through
//     the interpreter's generated wrapper. The variables belong to the wrapping layer,
//     never to the user's value, which therefore holds only hyperparameters and can
//     rebuild a layer (Clone, Trainer.Model) or back several. There is no optional
//     interface (interpreted types reach compiled code through a wrapper of one
//     interface, which would hide it): configuration to save is given with the Config
//     option. Save stores kind, name, Config and weights; code cannot be saved, so Load
//     takes CustomKind(kind, constructor) and LambdaFunc(name, f) and names every one
//     missing. Panics in user code become errors of the cell, never a crash.
//   - Options are functional and typed by the call that takes them (LayerOption,
//     CompileOption, FitOption, ...): passing one where it does not belong (Epochs to
//     Dense) does not compile, in a program or a notebook cell. An option several calls
//     take (Name, Seed, BatchSize, Device, Momentum, the weightings) has its own type
//     implementing each of their interfaces. Among layers the check is at run time: a
//     layer given another layer's option (Heads to Dense) keeps the error, and Compile
//     reports it, as it reports every error of layer construction; errors of applying
//     layers are kept in the returned nodes and reported by Model, Compile or Fit, so a
//     notebook cell never panics.
//   - Data is checked before it trains, because wrong data trains silently: class ids
//     must be classes of the head, and Fit's inputs and labels finite (one pass over
//     the host data, CheckFinite(false) skips it). A loss that turns NaN or infinite
//     stops Fit with an error naming the epoch and the batch (Keras's TerminateOnNaN,
//     on by default). Samples reshaped to the model's input shape are noted once on
//     stderr.
//   - Callbacks follow Keras: Patience(n) acts at the n-th epoch in a row without
//     improvement, ReduceLROnPlateau has Keras's defaults and Cooldown, RestoreBest
//     restores at the end of training, and each Fit starts a callback afresh. History
//     records the learning rate of each epoch as "lr".
//   - A model runs where it was compiled to run, and so do its copies: Save records the
//     Device option, Load and Clone (Trainer.Model) place the copy there unless Load's
//     Device option says otherwise.
//   - Cross-entropy on a softmax (or sigmoid) head is computed from the head's logits,
//     which is numerically stable; accuracy uses the logits too.
//   - Bad combinations are errors that say why: mse on int class labels, one-hot labels
//     with sparse_categorical_crossentropy, binary_crossentropy on a softmax head over
//     several classes, accuracy on a regression loss.
//   - Weight initialisation follows Keras (Glorot uniform kernels, zero biases); SetSeed
//     makes it reproducible. Adam uses Keras's epsilon 1e-7.
//   - Reproducibility: SetSeed (initial weights) and Compile's Seed (dropout masks and
//     shuffling) fix every random choice. Training on the CPU is then bit-identical from
//     run to run with the same number of threads (GOMAXPROCS or GML_THREADS) and GEMM
//     (GML_BLAS; the default native one): every reduction adds in an order fixed by the
//     thread count, never by timing; another thread count gives results equal to
//     rounding only. On a GPU training is bit-identical from run to run on the same
//     device, driver and gml version, since no shader adds floats atomically and every
//     reduction has a fixed order; GPU and CPU results agree to rounding only, and so do
//     different GPUs (they may pick other product shaders, e.g. cooperative matrices).
//     TestFitIsReproducible checks both.
//   - MixedPrecision("mixed_bfloat16") marks the matrix products (Dense, LSTM, GRU,
//     attention projections) and their gradients as allowed to round operands to bf16
//     (tensor.MatMulAttr.Precision); products, variables, gradients, the optimizer and
//     every other op stay f32 ("master weights"), so no loss scaling is needed. GPUs with
//     cooperative matrices run large products several times faster and keep small ones
//     (under 2^28 multiply-adds, where rounding would cost more than it saves) in f32;
//     the CPU and other GPUs compute them in f32.
//   - Save writes one file: a JSON header (architecture as layer configs and the node
//     graph, the variable list, optimizer config and step) followed by raw variable
//     bytes, so Load rebuilds the same layers and predicts identically in a fresh process.
//
// nn and the eager package ag share ops, backends and devices, not objects: an nn layer
// is not an ag layer, and a model built here trains only through Compile/Fit or Trainer.
package nn

// Package data loads datasets into host tensors and prepares them for training.
//
// Loaders: ReadIDX reads the IDX format of MNIST and Fashion-MNIST (gzip-compressed or
// raw, detected from the first bytes, not the file name); FashionMNIST loads the four
// files Debian's dataset-fashion-mnist package installs under
// /usr/share/datasets/fashion-mnist, with images scaled to [0, 1]; ReadCSV reads a
// delimited text table with an optional header, keeping numeric columns as numbers and
// others as strings so a label column can be encoded.
//
// Helpers work on whole tensors, batch dimension first: Take gathers rows, OneHot
// encodes class labels, Split shuffles with a seed and splits into train and test parts,
// and Standardizer / MinMax rescale features with statistics fitted on the training part
// and applied unchanged to the test part.
//
// Decisions: images come back as F32 and labels as I64 (0-based class ids), because those
// are the dtypes nn feeds; ReadIDX converts to whatever dtype the caller asks for. A
// missing dataset file is an error that names the file and the Debian package that
// provides it, never a panic. Loaders poll runtime.Interrupted at each read, so an
// interrupted cell stops reading a large file at once (runtime.ErrInterrupted).
package data

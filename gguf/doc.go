// Package gguf reads and writes GGUF files, the weight format of ggml and llama.cpp.
//
// Open memory-maps a file (format versions 2 and 3) and parses its header: metadata as
// typed Go values (Value: numbers, bools, strings, arrays) and tensor infos (name, shape,
// type, offset). Tensor data stays in the mapping until asked for: TensorData decodes a
// tensor to float32 (plain types and every block format of package tensor/quant: Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K to Q8_K, IQ4_NL, IQ4_XS, MXFP4), Tensor returns it as a
// gml host tensor in its stored type where gml has one (Q4_0, Q8_0 and Q4_K weights stay
// quantised, and tensor.MatMul multiplies them as they are), RawData returns its bytes. Writer builds files, quantising
// tensors to Q4_0, Q8_0 or Q4_K as they are added. A File renders as a summary table in a
// notebook (Summary; TensorTable lists the tensors).
//
// Decisions:
//   - Shapes are outermost first, as everywhere in gml; the file stores dimensions
//     innermost first (ggml's ne[0] is the row length), and the reader and writer reverse
//     them. Block formats quantise along the innermost dimension, which must therefore be
//     a whole number of blocks.
//   - The reader trusts nothing: every count is checked against the bytes left before
//     anything is allocated, every product of dimensions and every byte size against
//     overflow, every tensor's extent against the file, nesting of arrays against a
//     depth limit. A corrupt file is an error naming the record and byte offset, never a
//     panic; a fuzz test holds the parser to that.
//   - Tensors of types the package cannot decode (most IQ formats, ternary types) do not
//     stop a file from opening, so its metadata and other tensors stay usable; decoding
//     them is an "unsupported type" error naming the tensor and the type. Types whose
//     layout is unknown altogether are listed with size -1.
//   - Big-endian files (which version 3 permits) are refused with a clear error: nothing
//     in the file marks them except a byte-swapped version field, and none are in use.
//   - The mapping is released by Close, or when the File becomes unreachable. Data
//     accessors return copies (decoded floats, or RawData's bytes), so no slice outlives
//     the mapping it came from; Close waits for decoders in flight.
//   - The writer follows ggml's layout exactly (tensors in order, each padded to the
//     alignment, the last one too) so llama.cpp reads what gml writes.
package gguf

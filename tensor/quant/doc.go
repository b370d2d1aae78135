// Package quant holds the block formats of quantised weights as ggml defines them (the
// formats GGUF files carry): their sizes, decoders to float32 and encoders for the
// formats gml writes.
//
// A format stores a row of weights as consecutive blocks; a block holds BlockSize
// weights in BlockBytes bytes with its own scale (and offset). The "K" formats group 256
// weights in a super-block whose sub-block scales are themselves quantised against one
// or two float16 super-scales. Layouts are those of ggml's block_* structs, byte for
// byte, so data read from a GGUF file decodes without conversion.
//
// Decisions:
//   - The package imports nothing of gml but internal/half, so that package tensor can
//     build its quantised dtypes (Q4_0, Q8_0, Q4_K) on it, and the file reader (gguf),
//     the CPU kernels (runtime/cpu) and the tests share one definition of each layout.
//   - Decoders are written block-wise for speed; the tests check each against an
//     element-wise float64 decoder written from the layout's definition, so a layout
//     mistake cannot hide in both.
//   - Encoders exist for Q4_0, Q8_0 and Q4_K, the formats gml keeps quantised on its
//     devices. Q4_0 and Q8_0 take the largest magnitude of the block as the end of the
//     range; Q4_K fits each sub-block's scale and offset by least squares over a few
//     candidate grids, weighting large values more, as its error budget is dominated by
//     the outliers of a sub-block.
//   - Wrong lengths are errors, never panics: the input often comes from a file.
package quant

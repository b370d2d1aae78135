// Package spirv builds SPIR-V modules word by word, for shaders that glslc cannot
// compile (Debian's shaderc 2023.2 knows neither GL_KHR_cooperative_matrix nor
// GL_NV_cooperative_matrix2).
//
// A Module collects instructions into the sections the SPIR-V specification orders
// (2.4 "Logical Layout of a Module"): capabilities, extensions, extended-instruction
// imports, the memory model, entry points, execution modes, debug names,
// annotations, then types, constants and global variables, then function bodies.
// Words emits the header (magic, version, generator, bound, schema) and the sections
// in that order, whatever order the caller added them in.
//
// Decisions:
//   - The builder knows the encoding, not the semantics: Inst and Func.Op take an
//     opcode and operand words, so a new instruction needs one constant in spec.go,
//     not a new method. Helpers exist only where they remove real bookkeeping: ids,
//     type and constant deduplication (SPIR-V forbids two identical non-aggregate
//     type declarations), literal strings, hoisting of Function variables to the
//     entry block, and structured control flow (If, Loop).
//   - Types and constants share one section in first-use order, so every operand is
//     declared before it is used, as the specification requires. Struct and array
//     types are not deduplicated (they may carry different decorations); Struct and
//     ArrayType always declare a new one.
//   - Every opcode and enumerant in spec.go names the header or extension
//     specification it was taken from. Nothing is copied from other generators.
//   - Mistakes the builder can see (an instruction outside a block, a block left
//     without a terminator, a word count over 65535) are recorded and returned by
//     Words as one error, so generator code stays linear and is checked once.
package spirv

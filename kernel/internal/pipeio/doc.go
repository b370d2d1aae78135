// Package pipeio holds the two pipe helpers that both output captures of a cell need:
// the in-process one of kernel/exec and the worker's of kernel/worker.
//
// Decisions:
//   - It imports the standard library only, so that kernel/worker, which must stay free
//     of yaegi, can use it as well as kernel/exec.
//   - Output is sent in pieces while a cell runs; CompleteUTF8 keeps a piece from ending
//     inside a multi-byte character, which a front end would show as U+FFFD.
//   - Pending asks the kernel how many bytes a pipe holds (TIOCINQ), so that a writer can
//     wait until its reader has caught up before sending something that must follow the
//     output (a display, a prompt, a result).
package pipeio

// Package notebook reads and writes Jupyter notebooks (nbformat 4) and runs their code
// cells with gml's interpreter, as `gml run` does.
//
// Decisions:
//   - Only what gml needs is typed: cells (code, markdown, raw) and outputs (stream,
//     display_data, execute_result, error). Unknown metadata is kept as maps, so a
//     notebook survives a round trip.
//   - Written notebooks are nbformat 4.5: every cell has an id (missing ones are derived
//     from the cell's position, so output is reproducible), code cells always carry
//     outputs and execution_count, and multi-line text is written as a list of lines, as
//     Jupyter does. Reading accepts both strings and lists of lines.
//   - The runner keeps going after a failing cell, so one run reports every failure;
//     each cell gets its own timeout, as nbconvert's ExecutePreprocessor does.
//   - Outputs follow the protocol's semantics: consecutive stream text of one name is
//     merged, update_display_data replaces the outputs with the same display id, and
//     clear_output(wait) clears when the next output arrives.
package notebook

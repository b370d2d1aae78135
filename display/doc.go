// Package display renders values in a notebook: MIME bundles, the Renderer interface,
// HTML tables, line plots, progress bars, in-place updates and input prompts.
//
// Decisions:
//   - A value renders richly when it has a MIMEBundle() map[string]any method (the
//     Renderer interface). Keys are MIME types; "text/plain" is always present so every
//     front end, and a terminal, can show something. Binary payloads (PNG) are stored as
//     base64 strings, as nbformat and the Jupyter protocol expect.
//   - The package imports nothing of gml: the kernel installs a Publisher with
//     SetPublisher around each cell. Without a publisher everything falls back to text on
//     standard output, so the same calls work in plain Go programs and tests.
//   - Optional publisher abilities (reading input) are separate small interfaces found by
//     type assertion, so a publisher that cannot prompt still satisfies Publisher.
//   - The progress bar throttles notebook updates to about ten per second and prints a
//     carriage-return bar in a terminal; its postfix is free-form text so training loops
//     can show loss, metrics and anything else.
package display

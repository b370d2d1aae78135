// Package exec runs notebook cells written in Go with the yaegi interpreter (v0.16.1):
// one interpreter per kernel whose state persists across cells. It is the executor
// behind `gml kernel` and `gml run`, and talks to its front end only through the
// Publisher interface.
//
// How a cell runs:
//   - The cell is cut into top-level items at semicolons outside brackets (splitCell) and
//     grouped into chunks: all imports first, then runs of declarations and of
//     statements in cell order. yaegi cannot take declarations and statements in one
//     evaluation, and running the runs in order keeps `x := 3` before a func using x.
//   - Each item is preceded by a /*line cell[N]/_.go:L:C*/ directive, so parse errors,
//     compile errors and panic frames carry the cell's own lines and columns however
//     the item is wrapped; "/_.go" is dropped from messages. All cells share the base
//     name "_.go" because yaegi keys imports by file base name. N counts Execute calls.
//   - Chunks are parsed with the interpreter's FileSet, rewritten, compiled with
//     CompileAST and run with Execute on a goroutine of their own (stop.go), under the
//     cell's context, which is also bound with runtime.BindInterrupt so compiled library
//     loops (Fit, Evaluate, Predict, Executable.Run) stop at their next step.
//
// Interrupts (stop.go): cancelling the cell stops its interpreted code, and that of every
// goroutine, at the next step (yaegi's run id moves on and its done channel closes);
// Execute returns only when the chunk's goroutine has returned, i.e. once compiled code
// it was in has seen the interrupt, so a cell's reply never comes while its Fit still
// trains. The run id then moves back, so closures made before the interrupt keep
// working (with yaegi's own ExecuteWithContext they silently returned zero values
// afterwards). time.Sleep in cells ends on interrupt. When the work has not stopped after
// 2 s (compiled code that never checks), the front end is told where it is; Execute
// gives up after a limit (WithStop; 10 s by default, none in the kernel's worker, whose
// supervisor restarts it on a second interrupt). An interrupted cell's context stays
// bound until the next cell, so compiled loops in goroutines it left running stop too.
// yaegi offers no API for any of this: Interpreter.id, .done, .cancelChan and .mutex
// are reached by reflection, as scope.go does for the scope.
//
// Rewrites (rewrite.go, recursion.go, alloc.go), each working around a yaegi behaviour
// recorded in FACTS.md or measured as noted:
//   - `go` statements run under a deferred recover that hands the panic to the kernel.
//     A goroutine panic fails (and stops) the cell that started it while that cell
//     runs, and is reported on stderr at the start of the next cell otherwise; the
//     kernel never dies of it. For `go func(){...}(args)` the guard goes into the
//     literal, keeping Go's argument evaluation; any other call is wrapped in a literal,
//     so its arguments are evaluated in the new goroutine (a known difference).
//   - Loop variables get Go 1.22 per-iteration semantics when the body captures them (a
//     function literal, a go statement or &v): the loop's variable is renamed _gml_v and
//     the body starts with `v := _gml_v`. A three-clause loop whose body also assigns
//     to v keeps the old semantics, as a copy would hide the assignment from the loop.
//   - Compound statements at the top level of a cell (for, if, switch, select, blocks)
//     run inside `func(){...}()`: yaegi runs top-level statements in the global frame,
//     where a block's `x := ...` would overwrite a global x from an earlier cell and
//     per-iteration copies would share one slot.
//   - A top-level `x := v` whose names are all globals already becomes `x = v` (and is
//     compiled again as := when v does not fit x's type): yaegi would give x a new slot
//     and keep the old value alive forever, and earlier functions would see the old x.
//   - Cell functions that can reach themselves in the call graph of cell functions
//     (recursion.go), and String/Error/Format/GoString/MIMEBundle methods, start with
//     `_gmlcell.Enter<k>()`, which compares the goroutine's stack with 128 MiB (about
//     220,000 interpreted calls; internal/gstack reads it in a few ns). Past it the cell
//     fails with StackOverflow naming the function and the depth, and the goroutine ends
//     with runtime.Goexit: Go's own limit would end the process, and a panic would
//     unwind in time quadratic in the depth through yaegi's recover-and-repanic frames.
//   - make of a slice, map or channel type with a size that is not a small constant
//     gets its size checked by `_gmlcell.MakeSize` against the memory available
//     (internal/sysmem), a panic naming both instead of the runtime's fatal out of
//     memory (alloc.go).
//   - The last expression statement of a cell becomes `_gmlcell.Result(expr)`, which
//     hands over all its values (a multi-value call shows as a tuple). When it is a call
//     of a function value, the function is first handed to _gmlcell.Callee, so that a
//     last result of type error is treated as the call's outcome: non-nil, it fails the
//     cell ("Error: ... returned by m.Fit(x, y) at cell[3]:5:1"); nil, it is not shown.
//     When the wrapped form does not compile (the expression has no value) the chunk is
//     compiled as written. Calls of fmt.Print*, fmt.Fprint* and log.* show no value;
//     errors.New and fmt.Errorf show the error as a value.
//   - Must(f()), Must2(f()) and Check(err), declared by the prelude (prelude.go), are
//     lowered (must.go): the call's values go to temporaries before the statement and a
//     failed check stops the cell with an Error naming the call and its place. yaegi
//     cannot pass a multi-value call to a generic function, nor declare a global from a
//     generic call, which is why Must is not left to the interpreter.
//
// The prelude: every interpreter declares Must, Must2, Check, and min, max and clear
// (Go 1.21's builtins, which yaegi lacks) as ordinary functions a cell may redefine,
// plus helpers named _gml... for the rewrites.
//
// Go 1.22+ in cells, and redefinition: range over integers and functions, min, max
// and clear, generic type inference where yaegi's is weak, globals declared from
// generic calls (lower.go, infer.go, typeof.go); slices, maps, cmp, iter and
// sync/atomic's Pointer compiled from source into the main package (stdpkg.go); a
// redefined function or type takes effect in the declarations of earlier cells that
// use it (redefine.go). Several of these read types out of yaegi's compiled program
// or scope by reflection on its unexported fields, pinned to v0.16.1 and guarded by
// tests.
//
// Magics and shell lines (magics.go, shell.go): a cell is cut at lines starting with %
// or ! outside brackets and at a first %% line; its Go parts run as above, keeping their
// line numbers, and the magics in between. %go get and %%go (modules.go) build plugins
// with the go toolchain in a workspace module that reproduces the kernel's build, and
// hand their generated symbol tables to the interpreter.
//
// Values: a value whose type has MIMEBundle() map[string]any (display.Renderer) gives its
// own bundle; yaegi's interface mapping lets cell-defined types qualify too. Other values
// show as text (format.go): String/Error methods when present, else Go-literal-like text
// with quoted strings, sorted map keys, long composites broken over lines and cut after
// 20 elements. Reflection sees cell-defined struct types as unnamed; after a chunk that
// declares one runs, a probe (_gmlcell.TypeName) records its reflect type so values
// print as T{...}.
//
// Output: for the duration of a cell, fd 1 and 2 are pipes (dup3), drained by goroutines
// and sent to the publisher every 50 ms, before any display, clear or input request, and
// at the end, cut at UTF-8 boundaries. With WithoutCapture (the kernel's worker) fd 1 and
// 2 are left alone: the supervisor reads them. Output of compiled code (fmt, log, os.Stdout,
// cgo) is caught as well as the interpreter's. OriginalStderr gives the kernel a file on
// the real stderr for its logs. Standard input (os.Stdin, fmt.Scan*) and display.Input
// read lines from Publisher.Input.
//
// Errors (Error: Name, Value, Traceback): CompileError with the offending line and a
// caret; Panic with the frames yaegi reports ("in f at cell[2]:3:9") and, when an
// expression that can fail that way starts where the innermost frame points (yaegi may
// point at an earlier node of the same kind), that line with a caret; yaegi's reflect
// panics worded as Go's runtime errors (nil pointer dereference, index out of range,
// slice bounds), with the index and length when the failing expression is top-level
// code whose operands can be evaluated again (index.go: inside functions they were
// locals, gone when the panic is reported); GoroutinePanic; StackOverflow; Interrupted;
// KernelError for failures of the executor itself. A compile that fails removes the
// symbols it added to yaegi's scope (scope.go), since yaegi panics on them later. Not
// caught: a panic in a goroutine that compiled code starts and that calls back into
// cell code, runaway recursion in compiled code, and allocations by compiled code
// other than gml's; in the kernel the supervisor reports the worker's death.
//
// Memory (scope.go): after each compile the lists in which yaegi keeps every compiled
// root and a child scope per function or block (debugger-only, but they kept every
// version of a redefined function) are emptied, and after each chunk the global frame
// slots of its temporaries are replaced by zero values. A cell then keeps under 1 KiB of
// live heap (global frame slots, the FileSet's line tables), measured over 4,000 cells;
// the source of cells that define functions is kept for panic lines.
//
// Completion and inspection use no evaluation of user code: package members come from
// the symbol tables (also of packages not imported yet, by last path element), fields
// and methods from reflection on global variables, and docs from the doc index embedded
// by package symbols. Only a cell-defined func or type name is evaluated, to get its
// signature, and only when no cell runs. IsComplete uses go/scanner and go/parser.
package exec

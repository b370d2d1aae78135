package exec

import (
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/traefik/yaegi/interp"
)

// Error is a failed cell, in the shape of a Jupyter error message: ename, evalue and
// the traceback lines.
type Error struct {
	Name, Value string
	Traceback   []string
}

// Error returns "Name: Value".
func (e *Error) Error() string { return e.Name + ": " + e.Value }

// Error names.
const (
	nameCompile   = "CompileError"
	namePanic     = "Panic"
	nameGoPanic   = "GoroutinePanic"
	nameInterrupt = "Interrupted"
	nameInternal  = "KernelError"
)

// frameRE matches the line yaegi writes to its stderr for each interpreted frame a panic
// passes through, e.g. "cell[4]:2:9: panic: main.f(...)".
var frameRE = regexp.MustCompile(`^(\S+):(\d+):(\d+): panic: (\S*)\(\.\.\.\)\n?$`)

// frameLog is the interpreter's stderr. It keeps the panic frame lines (turning them
// into traceback entries) and passes everything else to out.
type frameLog struct {
	out    io.Writer
	mu     sync.Mutex
	frames []string
}

func (f *frameLog) Write(p []byte) (int, error) {
	if m := frameRE.FindSubmatch(p); m != nil {
		fn := strings.TrimPrefix(string(m[4]), "main.")
		loc := cleanPos(fmt.Sprintf("%s:%s:%s", m[1], m[2], m[3]))
		line := "  at " + loc
		if fn != "main" && fn != "" {
			line = "  in " + fn + " at " + loc
		}
		f.mu.Lock()
		f.frames = append(f.frames, line)
		f.mu.Unlock()
		return len(p), nil
	}
	return f.out.Write(p)
}

// take returns and forgets the frames logged so far.
func (f *frameLog) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	fr := f.frames
	f.frames = nil
	return fr
}

// goPanics translates the panics yaegi's reflection raises where compiled Go raises a
// runtime error, so the message reads as Go's: a nil pointer, map, function or
// interface used, an index or slice bound out of range. Index and bounds errors get
// their values where they can be found (index.go).
var goPanics = []struct {
	re  *regexp.Regexp
	go_ string
}{
	{regexp.MustCompile(`^reflect: call of reflect\.Value\.\w+ on zero Value$`), nilDeref},
	{regexp.MustCompile(`^reflect: Method on nil interface value$`), nilDeref},
	{regexp.MustCompile(`^reflect: indirection through nil pointer to embedded struct$`), nilDeref},
	{regexp.MustCompile(`^reflect\.Value\.Call: call of nil function$`), nilDeref},
	{regexp.MustCompile(`^reflect: (slice|array|string) index out of range$`), indexOutOfRange},
	{regexp.MustCompile(`^reflect\.Value\.Slice3?: (slice index out of bounds|string slice index out of bounds|slice of unaddressable array)$`), sliceOutOfRange},
}

// Go's texts of the runtime errors yaegi reports otherwise.
const (
	nilDeref        = "runtime error: invalid memory address or nil pointer dereference"
	indexOutOfRange = "runtime error: index out of range"
	sliceOutOfRange = "runtime error: slice bounds out of range"
)

// posPrefixRE matches the position yaegi puts in front of some of its runtime errors
// (interface conversions): the frames say where already.
var posPrefixRE = regexp.MustCompile(`^cell\[\d+\]/` + regexp.QuoteMeta(srcBase) + `:\d+:\d+: `)

// goPanicText returns Go's wording of a panic message.
func goPanicText(value string) string {
	for _, p := range goPanics {
		if p.re.MatchString(value) {
			return p.go_
		}
	}
	return posPrefixRE.ReplaceAllString(value, "")
}

// panicError builds the cell error of a panic with value v and the logged frames.
func panicError(name, prefix string, v any, frames []string) *Error {
	value := fmt.Sprint(v)
	if err, ok := v.(error); ok {
		value = err.Error()
	}
	value = goPanicText(value)
	tb := append([]string{prefix + "panic: " + value}, frames...)
	return &Error{Name: name, Value: prefix + value, Traceback: tb}
}

// cleanRE matches the file part of a position in a cell, "cell[N]/_.go:".
var cleanRE = regexp.MustCompile(`(cell\[\d+\])/` + regexp.QuoteMeta(srcBase) + `:`)

// cleanPos turns "cell[N]/_.go:L:C" into "cell[N]:L:C" throughout s.
func cleanPos(s string) string { return cleanRE.ReplaceAllString(s, "$1:") }

// unknownImportRE matches yaegi's error for an import it has no symbols for.
var unknownImportRE = regexp.MustCompile(`^(\S+: )?import "([^"]+)" error: unable to find source`)

// posRE finds a cell position at the start of an error message.
var posRE = regexp.MustCompile(`^cell\[(\d+)\]:(\d+):(\d+): `)

// compileError turns a parse or compile error into a cell error whose traceback shows
// each message with the offending line of the cell and a caret under the column.
func compileError(err error, cell int, code string) *Error {
	var msgs []string
	var list scanner.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			msgs = append(msgs, cleanPos(e.Error()))
		}
	} else {
		msgs = strings.Split(strings.TrimSpace(cleanPos(err.Error())), "\n")
	}
	for k, m := range msgs {
		if sub := unknownImportRE.FindStringSubmatch(m); sub != nil {
			msgs[k] = sub[1] + fmt.Sprintf("cannot import %q: the interpreter knows the standard library, gonum (mat, stat, floats) and gml's packages; others must be added to kernel/exec/symbols/gen", sub[2])
		}
	}
	lines := strings.Split(code, "\n")
	var tb []string
	for _, m := range msgs {
		tb = append(tb, m)
		sub := posRE.FindStringSubmatch(m)
		if sub == nil {
			continue
		}
		c, _ := strconv.Atoi(sub[1])
		ln, _ := strconv.Atoi(sub[2])
		col, _ := strconv.Atoi(sub[3])
		if c != cell || ln < 1 || ln > len(lines) {
			continue
		}
		src := lines[ln-1]
		tb = append(tb, "    "+src, "    "+caretPad(src, col)+"^")
	}
	return &Error{Name: nameCompile, Value: msgs[0], Traceback: tb}
}

// caretPad returns the whitespace that puts a caret under byte column col of src,
// keeping tabs so the caret lines up however tabs are shown.
func caretPad(src string, col int) string {
	var b strings.Builder
	for i, r := range src {
		if i >= col-1 {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// runError classifies an error returned by executing a chunk.
func runError(err error, frames []string) *Error {
	var p interp.Panic
	switch {
	case errors.As(err, &p) && isFailure(p.Value):
		return failureError(p.Value.(*failure), frames)
	case errors.As(err, &p):
		return panicError(namePanic, "", p.Value, frames)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return interruptError(err)
	default:
		return &Error{Name: nameInternal, Value: err.Error(), Traceback: []string{err.Error()}}
	}
}

// interruptError reports a cell stopped by its context: by the user, or by a time
// limit (gml run --timeout).
func interruptError(cause error) *Error {
	e := &Error{Name: nameInterrupt, Value: "the cell was interrupted", Traceback: []string{"Interrupted: the cell was stopped before it finished"}}
	if errors.Is(cause, context.DeadlineExceeded) {
		e.Value, e.Traceback = "the cell ran past its time limit", []string{"Interrupted: the cell ran past its time limit and was stopped"}
	}
	var ns *notStoppedError
	if errors.As(cause, &ns) {
		more := fmt.Sprintf("its work did not stop within %v of the interrupt and goes on in the background", ns.limit)
		e.Value += "; " + more
		e.Traceback = append(e.Traceback, "The interrupt stopped the cell's interpreted code, but "+more+
			" (compiled code that does not check for interrupts); goroutines it left running stop when they return to interpreted code.")
	}
	return e
}

package exec

import (
	"context"
	"fmt"
	"go/parser"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Magics and shell escapes (README "Magics"), as IPython and GoNB users know them. A
// line that starts with % (a line magic) or ! (a shell command) outside brackets, and a
// first line that starts with %% (a cell magic, which takes the rest of the cell), are
// not Go: runMagics cuts the cell at them and runs its Go parts and its magics in
// order. The Go parts keep their line numbers (the other lines are blanked), so errors
// point into the cell as usual. A line `!x` where x is a variable of the cells is Go.

// magic is one magic: its one-line help and its implementation. A line magic gets the
// text after its name; a cell magic gets that and the cell's body.
type magic struct {
	usage, help string
	cell        bool
	run         func(i *Interp, m *magicCall) Result
}

// magicCall is one use of a magic in a cell.
type magicCall struct {
	ctx, parent context.Context
	id          int
	name, args  string
	line        int    // 1-based line of the magic in the cell
	body        string // a cell magic's body, with the magic's own line blanked
	code        string // the cell
}

// magics is filled in init, since the %help magic lists the table itself.
var magics map[string]*magic

func init() {
	magics = map[string]*magic{
		"time":    {usage: "%time STATEMENT", help: "run the statement (or expression) once and print the wall and CPU time it took", run: (*Interp).magicTime},
		"timeit":  {usage: "%timeit [-n N] [-r R] STATEMENT", help: "time the statement over R runs of N loops, chosen automatically, and print the mean ± std. dev. per loop", run: (*Interp).magicTimeit},
		"who":     {usage: "%who", help: "list the variables the cells defined", run: (*Interp).magicWho},
		"whos":    {usage: "%whos", help: "table of the variables with their type and size (tensors: shape, dtype, device)", run: (*Interp).magicWhos},
		"env":     {usage: "%env [NAME[=VALUE]]", help: "list the environment, show a variable, or set one (for the cells, gml's libraries and ! commands)", run: (*Interp).magicEnv},
		"cd":      {usage: "%cd [DIR]", help: "change the kernel's working directory (home without DIR) and print it", run: (*Interp).magicCd},
		"pwd":     {usage: "%pwd", help: "print the kernel's working directory", run: (*Interp).magicPwd},
		"reset":   {usage: "%reset [-f]", help: "forget every variable, function and type the cells defined (imports stay) and free their memory", run: (*Interp).magicReset},
		"help":    {usage: "%help", help: "this list", run: (*Interp).magicHelp},
		"go":      {usage: "%go get MODULE[@VERSION]", help: "fetch a Go module with the go toolchain and compile its packages into the kernel; import them in the next cells", run: (*Interp).magicGoGet},
		"%time":   {cell: true, usage: "%%time", help: "run the cell once and print the wall and CPU time it took", run: (*Interp).magicTime},
		"%timeit": {cell: true, usage: "%%timeit [-n N] [-r R]", help: "time the cell's statements as %timeit does", run: (*Interp).magicTimeit},
		"%go":     {cell: true, usage: "%%go", help: "compile the cell with the go toolchain as a package (plugin) loaded into the kernel; its exported names become usable in the next cells at compiled speed", run: (*Interp).magicGoCell},
	}
}

// segment is a part of a cell: Go code, a magic or a shell command.
type segment struct {
	kind       byte   // 'g' Go, '%' line magic, 'c' cell magic, '!' shell
	name, args string // magic name and the rest of its line; shell command
	line       int    // first line, 1-based
	code       string // Go: the cell with the other lines blanked; cell magic: its body
}

// hasMagic reports whether a cell holds a magic or a shell line, cheaply.
func hasMagic(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "%") || strings.HasPrefix(t, "!") {
			return true
		}
	}
	return false
}

// splitMagics cuts a cell into segments (see the comment at the top).
func (i *Interp) splitMagics(code string) []segment {
	lines := strings.Split(code, "\n")
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[first]), "%%") {
		name, args, _ := strings.Cut(strings.TrimSpace(lines[first])[2:], " ")
		body := append(make([]string, first+1, len(lines)), lines[first+1:]...)
		return []segment{{kind: 'c', name: "%" + name, args: strings.TrimSpace(args), line: first + 1, code: strings.Join(body, "\n")}}
	}
	var segs []segment
	goStart := -1
	flushGo := func(end int) {
		if goStart < 0 {
			return
		}
		blank := make([]string, len(lines))
		copy(blank[goStart:end], lines[goStart:end])
		text := strings.Join(blank, "\n")
		if strings.TrimSpace(text) != "" {
			segs = append(segs, segment{kind: 'g', line: goStart + 1, code: text})
		}
		goStart = -1
	}
	depth := newDepthScanner()
	declared := map[string]bool{} // names the cell declares before the line
	for k, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if depth.atTop() && (strings.HasPrefix(t, "%") || (strings.HasPrefix(t, "!") && !i.isGoNot(t, declared))) {
			flushGo(k)
			if t[0] == '!' {
				segs = append(segs, segment{kind: '!', args: strings.TrimSpace(t[1:]), line: k + 1})
			} else {
				name, args, _ := strings.Cut(t[1:], " ")
				segs = append(segs, segment{kind: '%', name: name, args: strings.TrimSpace(args), line: k + 1})
			}
			continue
		}
		if goStart < 0 {
			goStart = k
		}
		for _, m := range declRE.FindAllStringSubmatch(l, -1) {
			for _, n := range strings.Split(m[1]+m[2], ",") {
				declared[strings.TrimSpace(n)] = true
			}
		}
		depth.scan(l)
	}
	flushGo(len(lines))
	return segs
}

// declRE finds the names a line declares with := or var.
var declRE = regexp.MustCompile(`^\s*([\w, ]+?)\s*:=|\bvar\s+(\w+)`)

// isGoNot reports whether a line starting with ! is Go: a negation of a variable or a
// declared name of the cells, or of one the cell declares before it (`!done`), rather
// than a shell command.
func (i *Interp) isGoNot(line string, declared map[string]bool) bool {
	rest := strings.TrimSpace(line[1:])
	if _, err := parser.ParseExpr(rest); err != nil {
		return false
	}
	name := rest
	if k := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}); k >= 0 {
		name = rest[:k]
	}
	if _, ok := i.globals()[name]; ok || declared[name] {
		return true
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	_, ok := i.decls[name]
	return ok
}

// depthScanner follows bracket depth over lines of Go, skipping strings, runes and
// comments (raw strings and block comments may span lines).
type depthScanner struct {
	depth            int
	inRaw, inComment bool
}

func newDepthScanner() *depthScanner { return &depthScanner{} }

func (d *depthScanner) atTop() bool { return d.depth <= 0 && !d.inRaw && !d.inComment }

func (d *depthScanner) scan(l string) {
	for k := 0; k < len(l); k++ {
		c := l[k]
		switch {
		case d.inRaw:
			d.inRaw = c != '`'
		case d.inComment:
			if c == '*' && k+1 < len(l) && l[k+1] == '/' {
				d.inComment = false
				k++
			}
		case c == '`':
			d.inRaw = true
		case c == '/' && k+1 < len(l) && l[k+1] == '/':
			return
		case c == '/' && k+1 < len(l) && l[k+1] == '*':
			d.inComment = true
			k++
		case c == '"' || c == '\'':
			for k++; k < len(l) && l[k] != c; k++ {
				if l[k] == '\\' {
					k++
				}
			}
		case c == '(' || c == '[' || c == '{':
			d.depth++
		case c == ')' || c == ']' || c == '}':
			d.depth--
		}
	}
}

// runMagics runs a cell that holds magics or shell lines, segment by segment; ok is
// false for a cell of plain Go.
func (i *Interp) runMagics(ctx, parent context.Context, id int, code string) (res Result, ok bool) {
	if !hasMagic(code) {
		return Result{}, false
	}
	segs := i.splitMagics(code)
	if len(segs) == 1 && segs[0].kind == 'g' {
		return Result{}, false
	}
	for _, s := range segs {
		i.mu.Lock()
		i.results, i.hasRes, i.callee = nil, false, nil // only the last part's value shows
		i.mu.Unlock()
		switch s.kind {
		case 'g':
			res = i.runGo(ctx, parent, id, s.code)
		case '!':
			res = i.runShell(ctx, s.args)
		default:
			m, known := magics[s.name]
			if !known || m.cell != (s.kind == 'c') {
				return Result{Err: magicError(fmt.Sprintf("cell[%d]:%d: unknown magic %%%s: %%help lists them", id, s.line, s.name))}, true
			}
			res = m.run(i, &magicCall{ctx: ctx, parent: parent, id: id, name: s.name, args: s.args, line: s.line, body: s.code, code: code})
		}
		if res.Err != nil {
			return res, true
		}
	}
	return res, true
}

// nameMagic is the Error.Name of a magic that failed.
const nameMagic = "MagicError"

func magicError(msg string) *Error {
	return &Error{Name: nameMagic, Value: msg, Traceback: []string{nameMagic + ": " + msg}}
}

// goText returns the Go code of a magic: the rest of a line magic's line, at its column
// (the cell's other lines blanked), or a cell magic's body.
func (m *magicCall) goText() string {
	if m.body != "" {
		return m.body
	}
	lines := strings.Split(m.code, "\n")
	out := make([]string, len(lines))
	l := lines[m.line-1]
	k := strings.Index(l, m.args)
	if k < 0 || m.args == "" {
		return ""
	}
	out[m.line-1] = strings.Repeat(" ", k) + l[k:]
	return strings.Join(out, "\n")
}

// magicTime runs the code once and prints its wall and CPU time, like IPython.
func (i *Interp) magicTime(m *magicCall) Result {
	text := m.goText()
	if strings.TrimSpace(text) == "" {
		return Result{Err: magicError("%time needs a statement: %time f(x)")}
	}
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	res := i.runGo(m.ctx, m.parent, m.id, text)
	wall := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	user := time.Duration(after.Utime.Nano() - before.Utime.Nano())
	sys := time.Duration(after.Stime.Nano() - before.Stime.Nano())
	fmt.Fprintf(os.Stdout, "CPU times: user %s, sys %s, total %s\nWall time: %s\n", fmtDuration(user), fmtDuration(sys), fmtDuration(user+sys), fmtDuration(wall))
	return res
}

// magicTimeit times the code over runs of loops, like IPython's %timeit: the number of
// loops is the first power of ten whose run takes 0.2 s or more (unless -n), with 7
// runs (unless -r).
func (i *Interp) magicTimeit(m *magicCall) Result {
	loops, runs := 0, 7
	args := strings.Fields(m.args)
	for len(args) >= 2 && (args[0] == "-n" || args[0] == "-r") {
		var v int
		if _, err := fmt.Sscan(args[1], &v); err != nil || v < 1 {
			return Result{Err: magicError(fmt.Sprintf("%%timeit: %s wants a positive number, have %q", args[0], args[1]))}
		}
		if args[0] == "-n" {
			loops = v
		} else {
			runs = v
		}
		args = args[2:]
	}
	if m.body == "" {
		m.args = strings.Join(args, " ")
	}
	text := m.goText()
	if strings.TrimSpace(text) == "" {
		return Result{Err: magicError("%timeit needs a statement: %timeit f(x)")}
	}
	// The code becomes the body of a loop in a function, compiled once, with its lines
	// kept. Each run calls it through the interpreter, so that Interrupt stops it, and
	// _gmlcell.Time measures the call.
	body := text
	if e, err := parser.ParseExpr(strings.TrimSpace(text)); err == nil && e != nil {
		body = strings.Replace(text, strings.TrimSpace(text), "_ = "+strings.TrimSpace(text), 1)
	}
	name := fmt.Sprintf("_gml_timeit%d", m.id)
	src := name + " := func(_gml_n int) { for _gml_k := 0; _gml_k < _gml_n; _gml_k++ {" + body + "\n} }"
	if res := i.runGo(m.ctx, m.parent, m.id, src); res.Err != nil {
		return res
	}
	defer i.runGo(context.Background(), context.Background(), m.id, name+" = nil")
	call := func(n int) (time.Duration, Result) {
		res := i.runGo(m.ctx, m.parent, m.id, fmt.Sprintf("%s.Time(func() { %s(%d) })", cellPkg, name, n))
		i.mu.Lock()
		defer i.mu.Unlock()
		return i.timed, res
	}
	if loops == 0 {
		for loops = 1; ; loops *= 10 {
			d, res := call(loops)
			if res.Err != nil {
				return res
			}
			if d >= 200*time.Millisecond || loops >= 1e9 {
				break
			}
		}
	}
	per := make([]float64, runs)
	for r := range per {
		d, res := call(loops)
		if res.Err != nil {
			return res
		}
		per[r] = float64(d) / float64(loops)
	}
	mean, std := meanStd(per)
	plural := func(n int, s string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, s)
		}
		return fmt.Sprintf("%d %ss", n, s)
	}
	fmt.Fprintf(os.Stdout, "%s ± %s per loop (mean ± std. dev. of %s, %s each)\n",
		fmtDuration(time.Duration(mean)), fmtDuration(time.Duration(std)), plural(runs, "run"), plural(loops, "loop"))
	return Result{}
}

// meanStd returns the mean and the population standard deviation of xs.
func meanStd(xs []float64) (mean, std float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

// fmtDuration prints a duration with 3 significant digits in ns, µs, ms or s, as
// IPython does.
func fmtDuration(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s >= 1:
		return fmt.Sprintf("%.3g s", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.3g µs", s*1e6)
	}
	return fmt.Sprintf("%.3g ns", s*1e9)
}

// userVars returns the variables cells defined, sorted by name.
func (i *Interp) userVars() ([]string, map[string]reflect.Value) {
	g := i.globals()
	i.mu.Lock()
	defer i.mu.Unlock()
	var names []string
	for n := range g {
		if n == "_" || strings.HasPrefix(n, "_gml") || i.prelude[n] || i.goNames[n] {
			continue
		}
		if _, isImport := i.imports[n]; isImport {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, g
}

func (i *Interp) magicWho(*magicCall) Result {
	names, _ := i.userVars()
	if len(names) == 0 {
		fmt.Fprintln(os.Stdout, "No variables are defined.")
		return Result{}
	}
	fmt.Fprintln(os.Stdout, strings.Join(names, "\t"))
	return Result{}
}

// magicWhos shows a table of the variables: name, type and what they hold (length of
// slices and maps, shape, dtype and device of tensors, the value of scalars).
func (i *Interp) magicWhos(*magicCall) Result {
	names, g := i.userVars()
	if len(names) == 0 {
		fmt.Fprintln(os.Stdout, "No variables are defined.")
		return Result{}
	}
	typeNames := i.names()
	rows := [][]string{{"Variable", "Type", "Data/Info"}}
	for _, n := range names {
		v := g[n]
		rows = append(rows, []string{n, typeName(v.Type(), typeNames), valueInfo(v, typeNames)})
	}
	var text, html strings.Builder
	widths := make([]int, 3)
	for _, r := range rows {
		for c, cell := range r {
			widths[c] = max(widths[c], len([]rune(cell)))
		}
	}
	html.WriteString("<table><thead><tr><th>Variable</th><th>Type</th><th>Data/Info</th></tr></thead><tbody>")
	for k, r := range rows {
		for c, cell := range r {
			fmt.Fprintf(&text, "%-*s", widths[c]+3, cell)
		}
		text.WriteString("\n")
		if k == 0 {
			text.WriteString(strings.Repeat("-", widths[0]+widths[1]+widths[2]+6) + "\n")
			continue
		}
		fmt.Fprintf(&html, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>", htmlEscape(r[0]), htmlEscape(r[1]), htmlEscape(r[2]))
	}
	html.WriteString("</tbody></table>")
	return Result{Data: map[string]any{"text/plain": strings.TrimRight(text.String(), "\n"), "text/html": html.String()}, Metadata: map[string]any{}}
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// typeName names a type for %whos: cell-defined struct types by their names.
func typeName(t reflect.Type, names map[reflect.Type]string) string {
	if n, ok := names[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeName(t.Elem(), names)
	case reflect.Slice:
		if t.Name() == "" {
			return "[]" + typeName(t.Elem(), names)
		}
	case reflect.Map:
		if t.Name() == "" {
			return "map[" + typeName(t.Key(), names) + "]" + typeName(t.Elem(), names)
		}
	}
	return t.String()
}

// valueInfo describes a variable's value for %whos.
func valueInfo(v reflect.Value, names map[reflect.Type]string) string {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface || v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		return "nil"
	}
	if info, ok := tensorInfo(v); ok {
		return info
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.Chan:
		return fmt.Sprintf("len=%d", v.Len())
	case reflect.Func:
		return "func"
	}
	s := formatValue(v.Interface(), names)
	if r := []rune(strings.Join(strings.Fields(s), " ")); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

// tensorInfo describes a value with Shape and DType methods (a tensor of any package) as
// "f32[2×3] on DEVICE", the device from a Device or Backend method of the value or of
// its Tape (autograd tensors), "host" without.
func tensorInfo(v reflect.Value) (string, bool) {
	shape, dtype := v.MethodByName("Shape"), v.MethodByName("DType")
	if !shape.IsValid() || !dtype.IsValid() || shape.Type().NumIn() != 0 || dtype.Type().NumIn() != 0 || shape.Type().NumOut() != 1 || dtype.Type().NumOut() != 1 {
		return "", false
	}
	var out string
	func() {
		defer func() { recover() }()
		out = fmt.Sprintf("%v%v", dtype.Call(nil)[0], strings.ReplaceAll(fmt.Sprint(shape.Call(nil)[0]), " ", "×"))
	}()
	if out == "" {
		return "", false
	}
	device := "host"
	if d, ok := deviceOf(v); ok {
		device = d
	} else if tp := v.MethodByName("Tape"); tp.IsValid() && tp.Type().NumIn() == 0 && tp.Type().NumOut() == 1 {
		if d, ok := deviceOf(tp.Call(nil)[0]); ok { // an autograd tensor, on its tape's device
			device = d
		}
	}
	return out + " on " + device, true
}

// deviceOf returns what v's Device or Backend method names.
func deviceOf(v reflect.Value) (string, bool) {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return "", false
	}
	for _, name := range []string{"Device", "Backend"} {
		if d := v.MethodByName(name); d.IsValid() && d.Type().NumIn() == 0 && d.Type().NumOut() == 1 && d.Type().Out(0).Kind() == reflect.String {
			return d.Call(nil)[0].String(), true
		}
	}
	return "", false
}

func (i *Interp) magicEnv(m *magicCall) Result {
	args := strings.TrimSpace(m.args)
	switch {
	case args == "":
		env := os.Environ()
		sort.Strings(env)
		fmt.Fprintln(os.Stdout, strings.Join(env, "\n"))
	case strings.ContainsAny(args, "= "):
		k, v, _ := strings.Cut(args, "=")
		if !strings.Contains(args, "=") {
			k, v, _ = strings.Cut(args, " ")
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := os.Setenv(k, v); err != nil {
			return Result{Err: magicError(fmt.Sprintf("%%env: setting %s: %v", k, err))}
		}
		fmt.Fprintf(os.Stdout, "env: %s=%s\n", k, v)
	default:
		v, ok := os.LookupEnv(args)
		if !ok {
			return Result{Err: magicError(fmt.Sprintf("%%env: %s is not set", args))}
		}
		return Result{Data: map[string]any{"text/plain": fmt.Sprintf("%q", v)}, Metadata: map[string]any{}}
	}
	return Result{}
}

func (i *Interp) magicCd(m *magicCall) Result {
	dir := strings.TrimSpace(m.args)
	if dir == "" || dir == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			return Result{Err: magicError("%cd: " + err.Error())}
		}
		dir = home
	} else if strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dir[2:])
		}
	}
	if err := os.Chdir(dir); err != nil {
		return Result{Err: magicError("%cd: " + err.Error())}
	}
	return i.magicPwd(m)
}

func (i *Interp) magicPwd(*magicCall) Result {
	wd, err := os.Getwd()
	if err != nil {
		return Result{Err: magicError("%pwd: " + err.Error())}
	}
	fmt.Fprintln(os.Stdout, wd)
	return Result{}
}

// magicReset forgets what the cells defined: each variable's value is set to its zero
// value (freeing its memory) and every name the cells declared leaves the
// interpreter's scope; imports, the prelude and loaded packages stay.
func (i *Interp) magicReset(*magicCall) Result {
	names, g := i.userVars()
	for _, n := range names {
		if v := g[n]; v.CanSet() {
			v.Set(reflect.Zero(v.Type()))
		}
	}
	i.mu.Lock()
	forget := append([]string{}, names...)
	for n, kind := range i.decls {
		if !i.prelude[n] && !strings.HasPrefix(n, "_gml") && kind != "" {
			forget = append(forget, n)
		}
	}
	for _, n := range forget {
		if !i.prelude[n] && !strings.HasPrefix(n, "_gml") {
			delete(i.decls, n)
			delete(i.defs, n)
			delete(i.generics, n)
			delete(i.genericSigs, n)
			delete(i.methods, n)
		}
	}
	for n := range i.defs { // methods, "T.M"
		if t, _, ok := strings.Cut(n, "."); ok && !i.prelude[t] {
			delete(i.defs, n)
		}
	}
	i.mu.Unlock()
	sym := mainScope(i.yi)
	for _, n := range forget {
		if sym.IsValid() && !strings.HasPrefix(n, "_gml") {
			sym.SetMapIndex(reflect.ValueOf(n), reflect.Value{})
		}
	}
	fmt.Fprintf(os.Stdout, "reset: %d names forgotten\n", len(forget))
	return Result{}
}

func (i *Interp) magicHelp(*magicCall) Result {
	var b strings.Builder
	b.WriteString("Magics (a line starting with % or !, or a cell starting with %%):\n")
	var keys []string
	for k := range magics {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, c int) bool {
		ka, kc := magics[keys[a]], magics[keys[c]]
		if ka.cell != kc.cell {
			return !ka.cell
		}
		return keys[a] < keys[c]
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-34s %s\n", magics[k].usage, magics[k].help)
	}
	fmt.Fprintf(&b, "  %-34s %s\n", "!COMMAND", "run a shell command; its output streams, Interrupt stops it, a failure fails the cell")
	b.WriteString("\nIn every cell (see README, \"Errors in cells\"):\n")
	b.WriteString("  Must(v, err) / Must(f())           v, or stop the cell with err and the place of the call\n")
	b.WriteString("  Must2(a, b, err)                   the same for two values\n")
	b.WriteString("  Check(err)                         stop the cell when err is not nil\n")
	b.WriteString("  a cell ending in a call whose last result is a non-nil error fails with that error\n")
	return Result{Data: map[string]any{"text/plain": strings.TrimRight(b.String(), "\n")}, Metadata: map[string]any{}}
}

// magicNames lists the magics as typed, for completion: "%time", "%%time", ...
func magicNames() []string {
	var out []string
	for k := range magics {
		out = append(out, "%"+k)
	}
	return out
}

// magicWord returns the magic name being typed at the end of before ("%ti", "%%"),
// when the line so far is only that.
func magicWord(before string) (string, bool) {
	line := before[strings.LastIndexByte(before, '\n')+1:]
	t := strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(t, "%") {
		return "", false
	}
	for _, r := range strings.TrimLeft(t, "%") {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", false
		}
	}
	return t, len(t)-len(strings.TrimLeft(t, "%")) <= 2
}

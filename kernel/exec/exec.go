package exec

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/traefik/yaegi/interp"

	_ "github.com/gml-dev/gml/backends" // cells find the CPU and GPU backends
	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/kernel/exec/symbols"
	"github.com/gml-dev/gml/runtime"
)

// Publisher is what a running cell uses to talk to its front end. The kernel implements
// it over IOPub and stdin; `gml run` collects nbformat outputs; tests fake it. Execute
// serialises its calls, so implementations need no locking of their own.
type Publisher interface {
	Stream(name, text string) // name is "stdout" or "stderr"
	Display(data, metadata map[string]any, displayID string, update bool)
	ClearOutput(wait bool)
	Input(prompt string, password bool) (string, error)
}

// Result is the outcome of one cell.
type Result struct {
	// Data and Metadata are the MIME bundle of the cell's last expression; nil when the
	// cell does not end with an expression that has a value.
	Data, Metadata map[string]any
	// Err is non-nil when the cell failed: compile error, panic, goroutine panic,
	// interrupt.
	Err *Error
}

// Option configures an interpreter.
type Option func(*config)

type config struct {
	extra     map[string]map[string]reflect.Value
	noCapture bool
	stopLimit time.Duration
	stuck     func(note string)
}

// defaultStopLimit is how long Execute waits, by default, for an interrupted cell's
// work to stop before it gives up and returns.
const defaultStopLimit = 10 * time.Second

// WithSymbols makes more compiled packages importable, in the form of yaegi's symbol
// tables ("import/path/name" to symbol name to value).
func WithSymbols(tables map[string]map[string]reflect.Value) Option {
	return func(c *config) { c.extra = tables }
}

// WithoutCapture leaves fd 1 and 2 alone: the process's output is read by someone else
// (the kernel's supervisor, which keeps it in order with the publisher's messages).
func WithoutCapture() Option {
	return func(c *config) { c.noCapture = true }
}

// WithStop says how an interrupted cell ends. Execute returns once the cell's work has
// stopped, or after limit (0: however long it takes); when it has not stopped after a
// few seconds, stuck is told where it is (nil: the cell's stderr is).
func WithStop(limit time.Duration, stuck func(note string)) Option {
	return func(c *config) { c.stopLimit, c.stuck = limit, stuck }
}

// Interp is one interpreter whose state persists across cells. Execute runs one cell at
// a time; Complete and Inspect may be called while a cell runs.
type Interp struct {
	cfg    config
	yi     *interp.Interpreter
	rc     *runControl // nil when yaegi's layout is unknown: see stop.go
	frames *frameLog
	stdin  *stdinReader

	run   sync.Mutex // held by Execute
	count int        // cells executed, for cell[N] names

	mu      sync.Mutex        // guards the fields below
	imports map[string]string // package name in cells -> import path
	decls   map[string]string // func and type names declared by cells -> "func" or "type"
	cell    *cellState        // the running cell, nil between cells
	late    []*Error          // goroutine panics that came after their cell ended
	results []any             // values handed over by _gmlcell.Result
	hasRes  bool
	// typeNames names the struct types cells define (reflection sees them unnamed);
	// newTypes lists those declared by the chunk being compiled, named once it ran.
	typeNames map[reflect.Type]string
	newTypes  []string
	// methods lists the methods cells declared, by receiver type name; reflection does
	// not see them on values of cell types.
	methods map[string][]string
	// calls is the call graph of cell functions and guardNames the names of those with
	// a recursion guard, by the guard's number (recursion.go).
	calls      map[string]map[string]bool
	guardNames []string
	// sources keeps the code of cells that may define functions, by cell number, for
	// the source line of a panic's frame; chunkSrc is the chunk being compiled or run.
	sources  map[int]string
	chunkSrc ast.Node
	// notice tells the running cell's front end where its interrupted work is stuck.
	notice func(string)
	// prelude holds the names the prelude declared that cells have not redefined.
	prelude map[string]bool
	// generics names the generic functions cells and the prelude declared ("F") and
	// those of packages interpreted from source ("slices.Sort").
	generics map[string]bool
	// genericSigs holds the signatures of the generic functions in generics.
	genericSigs map[string]*ast.FuncType
	// stdLoaded lists the standard packages compiled from source (stdpkg.go).
	stdLoaded map[string]bool
	// defs holds the declarations cells made, by declared name (redefine.go).
	defs     map[string]*def
	defOrder int
	// ws is the Go workspace of %go get and %%go (modules.go), nil until used; goNames
	// are the names %%go cells declared.
	ws      *goWorkspace
	goNames map[string]bool
	timed   time.Duration // the last call timed by _gmlcell.Time (%timeit)
	// callee is the function of a cell's last expression, when that is a call.
	callee *callee

	paths          []string // import paths of the loaded symbol tables
	importableOnce sync.Once
	importableIdx  map[string]string // see importable
}

// cellState is what a goroutine panic needs to fail the running cell.
type cellState struct {
	id       int
	cancel   context.CancelFunc
	goErr    *Error
	stackErr *Error // runaway recursion, which stops the cell
	// stopped is closed when the cell is interrupted (its context ends while it runs).
	stopped  chan struct{}
	stopOnce sync.Once
}

// New returns an interpreter with the standard library, gonum and gml's packages
// importable, and gml's packages pre-imported under their short names.
func New(opts ...Option) (*Interp, error) {
	cfg := config{stopLimit: defaultStopLimit}
	for _, o := range opts {
		o(&cfg)
	}
	i := &Interp{
		cfg:         cfg,
		frames:      &frameLog{out: os.Stderr},
		imports:     map[string]string{},
		decls:       map[string]string{},
		typeNames:   map[reflect.Type]string{},
		methods:     map[string][]string{},
		calls:       map[string]map[string]bool{},
		sources:     map[int]string{},
		generics:    map[string]bool{},
		genericSigs: map[string]*ast.FuncType{},
		stdLoaded:   map[string]bool{},
		defs:        map[string]*def{},
		goNames:     map[string]bool{},
	}
	i.stdin = &stdinReader{}
	i.stdin.asReader = i.stdin
	i.yi = interp.New(interp.Options{
		Stdin:  i.stdin,
		Stdout: os.Stdout,
		Stderr: i.frames,
		Env:    os.Environ(),
		Args:   []string{"gml"},
		// Cells see and change the process's environment (os.Getenv, os.Setenv, %env),
		// which compiled libraries and shell commands read too.
		Unrestricted: true,
	})
	for _, tables := range []map[string]map[string]reflect.Value{stdSymbols(), symbols.Symbols, cfg.extra, i.cellSymbols()} {
		if err := i.yi.Use(tables); err != nil {
			return nil, fmt.Errorf("exec: loading symbols: %w", err)
		}
		for key := range tables {
			if p := path.Dir(key); p != "." {
				i.paths = append(i.paths, p)
			}
		}
	}
	i.rc = newRunControl(i.yi)
	dropBuiltinGenerics(i.yi)
	// os.Stdin in cells reads through the front end's input prompt; time.Sleep ends
	// when the cell is interrupted.
	if err := i.yi.Use(interp.Exports{
		"os/os":     {"Stdin": reflect.ValueOf(&i.stdin.asReader).Elem()},
		"time/time": {"Sleep": reflect.ValueOf(i.sleep)},
	}); err != nil {
		return nil, fmt.Errorf("exec: installing os.Stdin and time.Sleep: %w", err)
	}
	var pre strings.Builder
	fmt.Fprintf(&pre, "import %s %q\n", cellPkg, cellPkgPath)
	for _, p := range symbols.Preimports {
		fmt.Fprintf(&pre, "import %s %q\n", p.Name, p.Path)
		i.imports[p.Name] = p.Path
	}
	if _, err := i.yi.Eval(pre.String()); err != nil {
		return nil, fmt.Errorf("exec: pre-importing packages: %w", err)
	}
	if err := i.declarePrelude(); err != nil {
		return nil, err
	}
	return i, nil
}

// cellSymbols returns the helper package every kernel imports as _gmlcell: GoPanic,
// called by the guard of rewritten go statements, the recursion guards Enter<k>, added
// as functions are defined (recursion.go), MakeSize, the check of make's size
// (alloc.go), and Result, which receives the values of a cell's last expression. Result has yaegi's interface mapping so that values of
// cell-defined types keep their MIMEBundle, String and Error methods on the way.
func (i *Interp) cellSymbols() map[string]map[string]reflect.Value {
	result := reflect.ValueOf(func(vals ...any) {
		i.mu.Lock()
		i.results, i.hasRes = vals, true
		i.mu.Unlock()
	})
	goPanic := reflect.ValueOf(i.goPanic)
	typeName := reflect.ValueOf(func(name string, nilPtr any) {
		if t := reflect.TypeOf(nilPtr); t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
			i.mu.Lock()
			i.typeNames[t.Elem()] = name
			i.mu.Unlock()
		}
	})
	cell := i.preludeSymbols()
	cell["Result"], cell["GoPanic"], cell["TypeName"] = result, goPanic, typeName
	cell["MakeSize"] = reflect.ValueOf(makeSize)
	return map[string]map[string]reflect.Value{
		cellPkgPath + "/cell": cell,
		".": {"MapTypes": reflect.ValueOf(map[reflect.Value][]reflect.Type{
			result: {
				reflect.TypeOf((*display.Renderer)(nil)).Elem(),
				reflect.TypeOf((*error)(nil)).Elem(),
				reflect.TypeOf((*fmt.Stringer)(nil)).Elem(),
			},
		})},
	}
}

// goPanic receives a panic recovered in a goroutine started by cell id. While that cell
// runs, the panic fails it (and stops it, as a goroutine panic stops a Go program);
// afterwards it is reported on stderr at the start of the next cell.
func (i *Interp) goPanic(id int, r any) {
	e := panicError(nameGoPanic, fmt.Sprintf("goroutine started in cell[%d]: ", id), r, i.frames.take())
	i.mu.Lock()
	defer i.mu.Unlock()
	if c := i.cell; c != nil && c.id == id {
		if c.goErr == nil {
			c.goErr = e
		}
		c.cancel()
		return
	}
	i.late = append(i.late, e)
}

// Close releases the interpreter and removes its Go workspace. Goroutines started by
// cells are not stopped.
func (i *Interp) Close() error {
	i.mu.Lock()
	ws := i.ws
	i.mu.Unlock()
	if ws != nil {
		return os.RemoveAll(ws.dir)
	}
	return nil
}

// Execute runs one cell. Output written to fd 1 and 2 (by interpreted or compiled code)
// streams to pub while the cell runs; display calls go to pub; reading os.Stdin or
// calling display.Input asks pub for input. Cancelling ctx interrupts the cell.
func (i *Interp) Execute(ctx context.Context, code string, pub Publisher) Result {
	i.run.Lock()
	defer i.run.Unlock()
	i.count++
	id := i.count
	lp := &lockedPublisher{p: pub}
	if !i.cfg.noCapture {
		c, err := startCapture(lp.Stream)
		if err != nil {
			return Result{Err: &Error{Name: nameInternal, Value: err.Error(), Traceback: []string{err.Error()}}}
		}
		lp.capture = c
		defer c.stop()
	}
	display.SetPublisher(lp)
	i.stdin.set(lp)
	cellCtx, cancel := context.WithCancel(ctx)
	runtime.BindInterrupt(cellCtx)
	state := &cellState{id: id, cancel: cancel, stopped: make(chan struct{})}
	i.mu.Lock()
	late := i.late
	i.late, i.cell = nil, state
	i.results, i.hasRes, i.callee = nil, false, nil
	i.mu.Unlock()
	for _, e := range late {
		lp.Stream("stderr", strings.Join(e.Traceback, "\n")+"\n")
	}
	i.frames.take() // frames of panics recovered by earlier cells

	i.notice = i.cfg.stuck
	if i.notice == nil {
		i.notice = func(note string) { lp.Stream("stderr", note) }
	}
	res := i.runCell(cellCtx, ctx, id, code)

	i.mu.Lock()
	i.cell = nil
	for _, e := range []*Error{state.goErr, state.stackErr} {
		if e != nil && (res.Err == nil || res.Err.Name == nameInterrupt) {
			res = Result{Err: e}
		}
	}
	vals, hasRes, callee := i.results, i.hasRes, i.callee
	i.results, i.hasRes, i.callee = nil, false, nil
	i.mu.Unlock()
	if res.Err == nil && hasRes {
		res = i.lastValue(vals, callee)
	}
	// An interrupted cell's context stays bound until the next cell, so that compiled
	// loops in goroutines it left running stop too.
	if cellCtx.Err() == nil {
		runtime.BindInterrupt(context.Background())
	}
	cancel()
	i.stdin.set(nil)
	display.SetPublisher(nil)
	return res
}

// runCell splits, rewrites, compiles and runs the chunks of a cell in order, stopping
// at the first failure.
func (i *Interp) runCell(ctx, parent context.Context, id int, code string) Result {
	i.mu.Lock()
	i.sources[id] = code
	i.mu.Unlock()
	defer func() {
		if !strings.Contains(code, "func") { // no function can refer back to this cell
			i.mu.Lock()
			delete(i.sources, id)
			i.mu.Unlock()
		}
	}()
	if res, ok := i.runMagics(ctx, parent, id, code); ok {
		return res
	}
	return i.runGo(ctx, parent, id, code)
}

// runGo runs Go code of cell id.
func (i *Interp) runGo(ctx, parent context.Context, id int, code string) Result {
	i.autoImport(code)
	return i.runCode(ctx, parent, fmt.Sprintf("cell[%d]", id), id, code)
}

// runCode splits, rewrites, compiles and runs the chunks of code, named name in
// positions, in order, stopping at the first failure.
func (i *Interp) runCode(ctx, parent context.Context, name string, id int, code string) Result {
	chunks, err := splitCell(code, i.genericVar)
	if err != nil {
		if be, ok := err.(*bracketError); ok {
			err = fmt.Errorf("%s:%d:%d: %s", name, be.line, be.col, be.msg)
		}
		return Result{Err: compileError(err, id, code)}
	}
	for n, ch := range chunks {
		last := n == len(chunks)-1
		prog, err := i.compile(ch, code, name, id, last)
		if err != nil {
			return Result{Err: compileError(explain(err, id, code), id, code)}
		}
		if prog == nil {
			continue // only imports already in effect
		}
		slots := i.globalSlots()
		err = i.runChunk(ctx, prog)
		i.releaseTemps(slots)
		if err != nil {
			if parent.Err() != nil {
				return Result{Err: interruptError(err)}
			}
			e := runError(i.explainPanic(err), i.frames.take())
			i.withSource(e, i.indexDetails(e, i.chunkSrc))
			return Result{Err: e}
		}
		i.nameTypes()
	}
	return Result{}
}

// nameTypes learns the reflect types of the struct types the last chunk declared, by
// running `_gmlcell.TypeName("T", (*T)(nil))` for each, so values print as T{...}.
// A type the probe cannot reach (a generic one, say) keeps printing as struct{...}.
func (i *Interp) nameTypes() {
	i.mu.Lock()
	names := i.newTypes
	i.newTypes = nil
	i.mu.Unlock()
	for _, n := range names {
		src := fmt.Sprintf("%s.TypeName(%q, (*%s)(nil))", cellPkg, n, n)
		if prog, err := i.yi.Compile(src); err == nil {
			i.yi.Execute(prog)
		}
	}
}

// compile parses and rewrites a chunk and compiles it. The last expression statement
// of the cell's last chunk is wrapped to hand its values over; when the wrapped form
// does not compile (the expression has no value, for example a call of a function
// without results) the chunk is compiled again as written. When yaegi's compiler
// panics with "nil type", which it does on a range over an integer or a function, the
// range statements are lowered by searchRanges (lower.go) and the chunk compiled again.
func (i *Interp) compile(ch chunk, code, name string, id int, last bool) (*interp.Program, error) {
	prog, err := i.compileChunk(ch, code, name, id, last, nil)
	if err != nil && !strings.Contains(err.Error(), "nil type") {
		return nil, i.locate(ch, code, name, id, err)
	}
	if err == nil {
		return prog, nil
	}
	kinds, lowerErr := i.searchRanges(ch, code, name, id)
	if kinds == nil {
		if lowerErr != nil {
			return nil, lowerErr
		}
		return prog, err
	}
	return i.compileChunk(ch, code, name, id, last, kinds)
}

// parseChunk parses a chunk and applies the rewrites (rewrite.go, lower.go, must.go,
// and the guards of recursion.go and alloc.go) but for those of statement chunks at
// the top level. kinds gives the lowering of the
// chunk's range statements by their order in rangeCandidates; missing ones get
// defaultKind. It returns nil, nil, nil for an import chunk whose imports are all in
// effect.
func (i *Interp) parseChunk(ch chunk, code, name string, id int, kinds []rangeKind) (*ast.File, *ast.BlockStmt, error) {
	fset := i.yi.FileSet()
	file, body, err := ch.parse(fset, code, name)
	if err != nil {
		return nil, nil, err
	}
	if ch.kind == itemImport {
		if err := i.importModules(file); err != nil {
			return nil, nil, err
		}
		left, err := i.importStd(file, !strings.HasPrefix(name, "std/"))
		if err != nil {
			return nil, nil, err
		}
		if !left || !i.dropRepeatedImports(file) {
			return nil, nil, nil
		}
		return file, nil, nil
	}
	i.renameStdRefs(file)
	i.lowerMinMax(file)
	byStmt := staticKinds(file)
	for k, r := range rangeCandidates(file) {
		if k < len(kinds) {
			byStmt[r] = kinds[k]
		}
	}
	if err := lowerRanges(fset, file, byStmt); err != nil {
		return nil, nil, err
	}
	rewriteGo(file, id)
	rewriteLoopVars(file)
	if body != nil {
		i.hoistMust(body, id, true)
		i.guardRecursion(body)
		guardMakes(body)
	} else {
		i.hoistMust(file, id, false)
		i.guardRecursion(file)
		guardMakes(file)
	}
	return file, body, nil
}

// compileChunk compiles a chunk with the range lowerings kinds (see parseChunk).
func (i *Interp) compileChunk(ch chunk, code, name string, id int, last bool, kinds []rangeKind) (*interp.Program, error) {
	file, body, err := i.parseChunk(ch, code, name, id, kinds)
	if err != nil || file == nil {
		return nil, err
	}
	i.chunkSrc = file
	if body != nil {
		i.chunkSrc = body
	}
	if ch.kind != itemStmt {
		simplifyCoreTypes(file)
		expandSeqParams(file)
		restore := i.prepareRedefinitions(ch, code, file)
		i.inferTypes(file, nil, false)
		prog, err := i.safeCompile(file)
		if err != nil && inferenceFailed(err) && i.inferTypes(file, nil, true) {
			prog, err = i.safeCompile(file)
		}
		if err != nil {
			restore()
			return nil, i.explainDefinitionLoop(err, nil, file.Decls)
		}
		i.record(file)
		if !strings.HasPrefix(name, "std/") {
			i.updateDependents(i.recordDefs(ch, code, name, id, file))
		}
		return prog, nil
	}
	wrapCompound(body)
	i.inferTypes(file, body, false)
	i.typeDefines(body, false)
	redefs := reassignGlobals(body, i.globals())
	prog, err := i.compileStmts(body, last)
	if err == nil {
		return prog, err
	}
	for _, a := range redefs { // the new value does not fit the old variable: redeclare
		a.Tok = token.DEFINE
	}
	retry := len(redefs) > 0
	if inferenceFailed(err) && i.inferTypes(file, body, true) {
		retry = true
		i.typeDefines(body, false) // the calls now have their types
	}
	if i.typeDefines(body, true) || retry {
		return i.compileStmts(body, last)
	}
	return prog, err
}

// searchRanges decides how to lower each range statement of a chunk that yaegi could
// not compile as written (see lower.go): for each, outer first, the first kind with
// which a probe of the chunk compiles, the statements not decided yet reduced to
// `_ = e`. It returns nil when some statement fits no kind, with the error of lowering
// it when there was one (a defer in the body of a range over a function, say).
func (i *Interp) searchRanges(ch chunk, code, name string, id int) ([]rangeKind, error) {
	file, _, err := ch.parse(i.yi.FileSet(), code, name)
	if err != nil {
		return nil, nil
	}
	cands := rangeCandidates(file)
	static := staticKinds(file)
	kinds := make([]rangeKind, len(cands))
	for k := range kinds {
		kinds[k] = rangeStub
	}
	for k, r := range cands {
		try := kindsToTry(r)
		if kind, ok := static[r]; ok {
			try = []rangeKind{kind}
		} else if defaultKind(r) == rangeInt {
			try = []rangeKind{rangeInt}
		}
		found := false
		var lowerErr error
		for _, kind := range try {
			kinds[k] = kind
			ok, err := i.probeChunk(ch, code, name, id, kinds)
			if ok {
				found = true
				break
			}
			if lowerErr == nil {
				lowerErr = err
			}
		}
		if !found {
			return nil, lowerErr
		}
	}
	return kinds, nil
}

// probeChunk reports whether the chunk compiles with the range lowerings kinds,
// without running it or leaving a trace, or returns the error of rewriting it.
// Statements are probed inside a function literal, where yaegi's limits on global
// declarations do not apply.
func (i *Interp) probeChunk(ch chunk, code, name string, id int, kinds []rangeKind) (bool, error) {
	file, body, err := i.parseChunk(ch, code, name, id, kinds)
	if err != nil || file == nil {
		return false, err
	}
	if body != nil {
		_, ok := i.probe(body.List)
		return ok, nil
	}
	_, err = i.probeCompile(file)
	return err == nil, nil
}

// compileStmts compiles a statement chunk, handing over the values of its last
// expression when it is the cell's last chunk and that compiles.
func (i *Interp) compileStmts(body *ast.BlockStmt, last bool) (*interp.Program, error) {
	n := len(body.List) - 1
	for n >= 0 && isZeroing(body.List[n]) {
		n-- // the temporaries of a lowered Must are dropped after the value is taken
	}
	if last && n >= 0 {
		if es, ok := body.List[n].(*ast.ExprStmt); ok && !isPrint(es.X) {
			list := body.List
			for _, wrap := range []func(ast.Expr) []ast.Stmt{
				func(x ast.Expr) []ast.Stmt { return i.calleeResult(list[:n+1], x) },
				resultCall,
			} {
				w := wrap(es.X)
				if w == nil {
					continue
				}
				body.List = append(append(append([]ast.Stmt{}, list[:n]...), w...), list[n+1:]...)
				if prog, err := i.safeCompile(body); err == nil {
					return prog, nil
				}
			}
			body.List = list
		}
	}
	prog, err := i.safeCompile(body)
	if err != nil {
		return nil, i.explainDefinitionLoop(err, body.List, nil)
	}
	return prog, nil
}

// reassignGlobals turns top-level `x := v` into `x = v` when every name on the left is
// already a global (or _), and returns the statements it changed. yaegi gives a
// redeclared global a new slot and keeps the old one, so re-running `buf := make(...)`
// would keep every old buffer alive, and functions defined earlier would go on seeing
// the old x. When the new value does not fit the old type the caller restores :=.
func reassignGlobals(body *ast.BlockStmt, globals map[string]reflect.Value) []*ast.AssignStmt {
	var changed []*ast.AssignStmt
	for _, s := range body.List {
		a, ok := s.(*ast.AssignStmt)
		if !ok || a.Tok != token.DEFINE {
			continue
		}
		all := true
		for _, e := range a.Lhs {
			id, ok := e.(*ast.Ident)
			if _, exists := globals[id.Name]; !ok || (id.Name != "_" && !exists) {
				all = false
			}
		}
		if all {
			a.Tok = token.ASSIGN
			changed = append(changed, a)
		}
	}
	return changed
}

// dropRepeatedImports removes the imports already in effect (same name, same path)
// from an import chunk, since yaegi rejects an import it has seen as a redeclaration and
// users re-run cells with import lines all the time. It reports whether any is left.
func (i *Interp) dropRepeatedImports(f *ast.File) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	var decls []ast.Decl
	var kept []*ast.ImportSpec
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			decls = append(decls, d)
			continue
		}
		var specs []ast.Spec
		for _, s := range gd.Specs {
			imp := s.(*ast.ImportSpec)
			if name, path := importName(imp); i.imports[name] != path {
				specs = append(specs, s)
				kept = append(kept, imp)
			}
		}
		if len(specs) > 0 {
			gd.Specs = specs
			decls = append(decls, gd)
		}
	}
	f.Decls, f.Imports = decls, kept
	return len(kept) > 0
}

// importName returns the name an import spec binds and its path.
func importName(imp *ast.ImportSpec) (name, path string) {
	path = strings.Trim(imp.Path.Value, "`\"")
	name = packageName(path)
	if imp.Name != nil {
		name = imp.Name.Name
	}
	return name, path
}

// isPrint reports calls of fmt.Print*/Fprint* and log.*, whose (n, err) results would
// only clutter the cell's output.
func isPrint(x ast.Expr) bool {
	call, ok := x.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	return (pkg.Name == "fmt" && (strings.HasPrefix(sel.Sel.Name, "Print") || strings.HasPrefix(sel.Sel.Name, "Fprint"))) || pkg.Name == "log"
}

// record remembers the imports and the func and type names of a compiled chunk, for
// completion and inspection.
func (i *Interp) record(f *ast.File) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, imp := range f.Imports {
		name, path := importName(imp)
		if name != "_" && name != "." {
			i.imports[name] = path
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				i.decls[d.Name.Name] = "func"
				delete(i.prelude, d.Name.Name)
				if d.Type.TypeParams != nil {
					i.generics[d.Name.Name] = true
					i.genericSigs[d.Name.Name] = d.Type
				} else {
					delete(i.generics, d.Name.Name)
					delete(i.genericSigs, d.Name.Name)
				}
			} else if t := recvType(d.Recv); t != "" && !slices.Contains(i.methods[t], d.Name.Name) {
				i.methods[t] = append(i.methods[t], d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					i.decls[ts.Name.Name] = "type"
					if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.TypeParams == nil {
						i.newTypes = append(i.newTypes, ts.Name.Name)
					}
				}
			}
		}
	}
}

// recvType returns the base type name of a method receiver (T for T, *T, T[P]).
func recvType(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	e := recv.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// bundle returns the MIME bundle of a cell's values: the value's own bundle when it is a
// display.Renderer, text/plain otherwise; several values show as a tuple.
func bundle(vals []any, names map[reflect.Type]string) (b map[string]any) {
	if len(vals) == 1 {
		if r, ok := vals[0].(display.Renderer); ok && r != nil {
			defer func() {
				if p := recover(); p != nil {
					b = map[string]any{"text/plain": fmt.Sprintf("%s (MIMEBundle panicked: %v)", formatValue(vals[0], names), p)}
				}
			}()
			if rb := r.MIMEBundle(); rb != nil {
				if _, ok := rb["text/plain"]; !ok {
					rb["text/plain"] = formatValue(vals[0], names)
				}
				return rb
			}
		}
		return map[string]any{"text/plain": formatValue(vals[0], names)}
	}
	parts := make([]string, len(vals))
	for k, v := range vals {
		parts[k] = formatValue(v, names)
	}
	return map[string]any{"text/plain": "(" + strings.Join(parts, ", ") + ")"}
}

// names returns a copy of the names of cell-defined struct types.
func (i *Interp) names() map[reflect.Type]string {
	i.mu.Lock()
	defer i.mu.Unlock()
	m := make(map[reflect.Type]string, len(i.typeNames))
	for t, n := range i.typeNames {
		m[t] = n
	}
	return m
}

// lockedPublisher serialises calls to the cell's publisher and sends captured output
// before anything else, so text printed before a display call or a prompt shows first.
type lockedPublisher struct {
	mu      sync.Mutex
	p       Publisher
	capture *capture
}

func (l *lockedPublisher) Stream(name, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Stream(name, text)
}

func (l *lockedPublisher) Display(data, metadata map[string]any, id string, update bool) {
	l.capture.flush(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.Display(data, metadata, id, update)
}

func (l *lockedPublisher) ClearOutput(wait bool) {
	l.capture.flush(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.p.ClearOutput(wait)
}

func (l *lockedPublisher) Input(prompt string, password bool) (string, error) {
	l.capture.flush(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p.Input(prompt, password)
}

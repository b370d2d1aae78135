package exec

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// A compile that fails can leave half-made symbols in yaegi's package scope (a name
// used before it was defined becomes an "incomplete type"), and later cells that touch
// them make yaegi panic. safeCompile therefore remembers the scope's names before
// compiling and deletes the new ones when compiling fails. yaegi offers no API for this,
// so mainScope reaches the scope map by reflection on its unexported fields
// (Interpreter.scopes["main"].sym, yaegi v0.16.1); TestFailedCompileLeavesNoTrace
// checks that this still works. It also turns panics inside yaegi's compiler into
// errors.

// mainScope returns the symbol map of the interpreter's main package as a settable
// reflect.Value, or an invalid Value when yaegi's layout is not the expected one.
func mainScope(yi *interp.Interpreter) reflect.Value {
	scopes := reflect.ValueOf(yi).Elem().FieldByName("scopes")
	if !scopes.IsValid() || scopes.Kind() != reflect.Map {
		return reflect.Value{}
	}
	sc := scopes.MapIndex(reflect.ValueOf("main"))
	if !sc.IsValid() || sc.IsNil() {
		return reflect.Value{}
	}
	sym := sc.Elem().FieldByName("sym")
	if !sym.IsValid() || sym.Kind() != reflect.Map {
		return reflect.Value{}
	}
	return reflect.NewAt(sym.Type(), unsafe.Pointer(sym.UnsafeAddr())).Elem()
}

// safeCompile compiles n, recovering from compiler panics and removing the symbols a
// failed compile added.
func (i *Interp) safeCompile(n ast.Node) (prog *interp.Program, err error) {
	sym := mainScope(i.yi)
	before := map[string]bool{}
	if sym.IsValid() {
		for _, k := range sym.MapKeys() {
			before[k.String()] = true
		}
	}
	defer func() {
		if r := recover(); r != nil {
			prog, err = nil, fmt.Errorf("%v", r)
		}
		if err != nil && sym.IsValid() {
			for _, k := range sym.MapKeys() {
				if !before[k.String()] {
					sym.SetMapIndex(k, reflect.Value{})
				}
			}
		}
	}()
	defer dropCompileHistory(i.yi)
	return i.yi.CompileAST(n)
}

// dropCompileHistory empties the lists in which yaegi keeps everything it has compiled
// and which only its debugger reads: Interpreter.roots, every root node, and the child
// lists of the universe and package scopes, one scope per function or block of every
// chunk, whose def keeps the function's nodes. Without this a cell that redefines a
// function kept all its earlier versions (22 KB a cell, measured over 2,000 cells).
func dropCompileHistory(yi *interp.Interpreter) {
	v := reflect.ValueOf(yi).Elem()
	clear := func(f reflect.Value) {
		if !f.IsValid() || f.Kind() != reflect.Slice {
			return
		}
		s := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
		for k := 0; k < s.Len(); k++ {
			s.Index(k).Set(reflect.Zero(s.Type().Elem()))
		}
		s.SetLen(0)
	}
	clear(v.FieldByName("roots"))
	if u := v.FieldByName("universe"); u.IsValid() && u.Kind() == reflect.Pointer && !u.IsNil() {
		clear(u.Elem().FieldByName("child"))
	}
	if scopes := v.FieldByName("scopes"); scopes.IsValid() && scopes.Kind() == reflect.Map {
		for it := scopes.MapRange(); it.Next(); {
			if sc := it.Value(); sc.Kind() == reflect.Pointer && !sc.IsNil() {
				clear(sc.Elem().FieldByName("child"))
			}
		}
	}
}

// explainDefinitionLoop improves yaegi's "constant definition loop", which it reports
// for a top-level `x := expr` or `var x = expr` whose expression uses an undefined
// name: each such expression is compiled alone inside a function literal (without
// running it), where yaegi names the undefined identifier. The first such error is
// returned; err itself when none is found.
func (i *Interp) explainDefinitionLoop(err error, body []ast.Stmt, decls []ast.Decl) error {
	if !strings.Contains(err.Error(), "definition loop") {
		return err
	}
	var exprs []ast.Expr
	for _, s := range body {
		if a, ok := s.(*ast.AssignStmt); ok && a.Tok == token.DEFINE {
			exprs = append(exprs, a.Rhs...)
		}
		if d, ok := s.(*ast.DeclStmt); ok {
			decls = append(decls, d.Decl)
		}
	}
	for _, d := range decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, s := range g.Specs {
				exprs = append(exprs, s.(*ast.ValueSpec).Values...)
			}
		}
	}
	for _, e := range exprs {
		p := e.Pos()
		blank := &ast.AssignStmt{Lhs: []ast.Expr{&ast.Ident{NamePos: p, Name: "_"}}, TokPos: p, Tok: token.ASSIGN, Rhs: []ast.Expr{e}}
		probe := &ast.BlockStmt{Lbrace: p, Rbrace: e.End(), List: []ast.Stmt{&ast.ExprStmt{X: callLit(p, e.End(), blank)}}}
		if _, perr := i.safeCompile(probe); perr != nil && !strings.Contains(perr.Error(), "definition loop") {
			return perr
		}
	}
	return err
}

// globals returns the interpreter's global variables and constants. yaegi's Globals
// indexes the global frame, which grows only when a compiled chunk runs; should a chunk
// have compiled without running, it would panic, and this returns what it can: nothing.
func (i *Interp) globals() (g map[string]reflect.Value) {
	defer func() {
		if recover() != nil {
			g = map[string]reflect.Value{}
		}
	}()
	return i.yi.Globals()
}

// Temporaries. yaegi runs the top-level statements of a chunk in the global frame and
// gives every temporary value of them (a call's result, `make(...)` passed to len) a
// slot of its own there, which it never reuses or clears: every cell kept the values
// its expressions made, `len(make([]byte, 1<<20))` a mebibyte each time. After a chunk
// has run, releaseTemps replaces the slots it added that no symbol of any package
// scope refers to with fresh zero values, so the garbage collector can take what they
// held; the slots themselves (a reflect.Value, 24 bytes) stay. It reaches
// Interpreter.frame.data, .frame.mutex, .scopes and .universe, and symbol.index, by
// reflection (yaegi v0.16.1); TestTemporariesAreReleased checks that it still works.

// globalSlots returns the number of slots of yaegi's global frame.
func (i *Interp) globalSlots() int {
	data, _ := globalFrame(i.yi)
	if !data.IsValid() {
		return 0
	}
	return data.Len()
}

// releaseTemps clears the unnamed slots from index from on.
func (i *Interp) releaseTemps(from int) {
	data, mu := globalFrame(i.yi)
	if !data.IsValid() || data.Len() <= from {
		return
	}
	named := namedSlots(i.yi)
	if named == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for k := from; k < data.Len(); k++ {
		if named[k] {
			continue
		}
		if v := data.Index(k).Interface().(reflect.Value); v.IsValid() {
			data.Index(k).Set(reflect.ValueOf(reflect.New(v.Type()).Elem()))
		}
	}
}

// globalFrame returns the data of yaegi's global frame, settable, and its lock; an
// invalid Value when the layout is not the expected one.
func globalFrame(yi *interp.Interpreter) (reflect.Value, *sync.RWMutex) {
	fr := reflect.ValueOf(yi).Elem().FieldByName("frame")
	if !fr.IsValid() || fr.Kind() != reflect.Pointer || fr.IsNil() {
		return reflect.Value{}, nil
	}
	data, mu := fr.Elem().FieldByName("data"), fr.Elem().FieldByName("mutex")
	if !data.IsValid() || data.Type() != reflect.TypeOf([]reflect.Value(nil)) || !mu.IsValid() || mu.Type() != reflect.TypeOf(sync.RWMutex{}) {
		return reflect.Value{}, nil
	}
	return reflect.NewAt(data.Type(), unsafe.Pointer(data.UnsafeAddr())).Elem(), (*sync.RWMutex)(unsafe.Pointer(mu.UnsafeAddr()))
}

// namedSlots returns the global frame slots that symbols of the universe and of the
// package scopes use, or nil when yaegi's layout is not the expected one.
func namedSlots(yi *interp.Interpreter) map[int]bool {
	v := reflect.ValueOf(yi).Elem()
	scopes, universe := v.FieldByName("scopes"), v.FieldByName("universe")
	if !scopes.IsValid() || scopes.Kind() != reflect.Map || !universe.IsValid() || universe.Kind() != reflect.Pointer {
		return nil
	}
	named := map[int]bool{}
	add := func(sc reflect.Value) bool {
		if sc.IsNil() {
			return true
		}
		sym := sc.Elem().FieldByName("sym")
		if !sym.IsValid() || sym.Kind() != reflect.Map {
			return false
		}
		for it := sym.MapRange(); it.Next(); {
			s := it.Value()
			if s.Kind() != reflect.Pointer || s.IsNil() {
				continue
			}
			idx := s.Elem().FieldByName("index")
			if !idx.IsValid() || idx.Kind() != reflect.Int {
				return false
			}
			if k := int(idx.Int()); k >= 0 {
				named[k] = true
			}
		}
		return true
	}
	if !add(universe) {
		return nil
	}
	for it := scopes.MapRange(); it.Next(); {
		if !add(it.Value()) {
			return nil
		}
	}
	return named
}

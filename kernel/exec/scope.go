package exec

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"strings"
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
	defer quietLog()()
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

package exec

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"reflect"
	"strings"
)

// Error handling in cells (README "Errors in cells"): Must, Must2 and Check (prelude.go)
// stop a cell with an error and the place of the call, and a cell whose last expression
// is a call whose last result is a non-nil error fails with that error.
//
// yaegi v0.16.1 cannot pass a multi-value call to a generic function (Must(f()) fails
// inside yaegi's compiler) nor declare a global from a generic call (x := Must(v, err)
// at the top level of a cell). hoistMust therefore lowers every Must(...) and
// Must2(...) of the prelude before compiling:
//
//	x := Must(f(a))   becomes   _gml_m3_1, _gml_e3_1 := f(a)
//	                            _gmlCheck(_gml_e3_1, "Must")   // at the Must call's position
//	                            x := _gml_m3_1
//	                            _gml_m3_1 = _gmlZero(_gml_m3_1) // at the top level only
//
// and Check(err) becomes _gmlCheck(err, "Check(err)", "cell[N]:L:C"), since the frame
// positions yaegi reports for a panic are those of a nearby node, not of the call.
//
// The lowering evaluates f(a) before the rest of the statement. That is Go's order only when
// nothing with an effect is evaluated before the Must call in that statement, so a
// Must call is lowered only then: not after another call or receive in the statement,
// not on the right of && or ||, not in a loop condition or post statement. A Must call
// that is not lowered compiles as the generic function, and fails the way yaegi does
// when given a multi-value call; explain (explain.go) then says how to split the statement.

// mustArity is the number of values Must and Must2 return.
var mustArity = map[string]int{"Must": 1, "Must2": 2}

// hoister lowers the Must calls of one chunk; temporaries are named after the cell.
type hoister struct {
	cell int
	n    int
	must map[string]bool // Must names still meaning the prelude's functions
	top  bool            // the chunk's top-level statement list is being lowered
	fset *token.FileSet
}

// hoistMust lowers the hoistable Must and Must2 calls under root (a statement chunk's
// body or a declaration file). top says that root's own statement list runs in the
// global frame, where temporaries are globals and are zeroed after use.
func (i *Interp) hoistMust(root ast.Node, cell int, top bool) {
	i.mu.Lock()
	must := map[string]bool{}
	for name := range mustArity {
		if i.prelude[name] {
			must[name] = true
		}
	}
	check := i.prelude["Check"]
	i.mu.Unlock()
	h := &hoister{cell: cell, must: must, fset: i.yi.FileSet()}
	if check {
		ast.Inspect(root, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok && len(c.Args) == 1 && c.Ellipsis == token.NoPos {
				if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "Check" {
					c.Args = append(c.Args, h.str(exprText(h.fset, c), c.Pos()), h.str(h.place(c.Pos()), c.Pos()))
					id.Name = "_gmlCheck"
				}
			}
			return true
		})
	}
	if len(must) == 0 {
		return
	}
	var visit func(n ast.Node, top bool)
	visit = func(n ast.Node, top bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			var list *[]ast.Stmt
			switch x := n.(type) {
			case *ast.BlockStmt:
				list = &x.List
			case *ast.CaseClause:
				list = &x.Body
			case *ast.CommClause:
				list = &x.Body
			default:
				return true
			}
			isTop := top && n == root
			for _, s := range *list {
				visit(s, false) // nested lists first: their statements stay where they are
			}
			h.top = isTop
			*list = h.lowerList(*list)
			return false
		})
	}
	visit(root, top)
}

// lowerList returns the statements of list with the Must calls of each lowered.
func (h *hoister) lowerList(list []ast.Stmt) []ast.Stmt {
	var out []ast.Stmt
	for _, s := range list {
		calls := h.hoistable(s)
		if len(calls) == 0 {
			out = append(out, s)
			continue
		}
		var after []ast.Stmt
		for _, c := range calls {
			before, temps, zero := h.lower(c)
			out = append(out, before...)
			replaceExpr(s, c.call, temps)
			after = append(after, zero...)
		}
		out = append(out, s)
		out = append(out, after...)
	}
	return out
}

// mustCall is a Must call found in a statement.
type mustCall struct {
	call  *ast.CallExpr
	arity int
}

// hoistable returns the Must calls of statement s that may be evaluated before it, in
// order. It looks only at the parts of s evaluated once, before anything else in s.
func (h *hoister) hoistable(s ast.Stmt) []mustCall {
	var parts []ast.Node
	switch x := s.(type) {
	case *ast.AssignStmt:
		for _, e := range x.Lhs {
			parts = append(parts, e)
		}
		for _, e := range x.Rhs {
			parts = append(parts, e)
		}
	case *ast.ExprStmt:
		parts = append(parts, x.X)
	case *ast.ReturnStmt:
		for _, e := range x.Results {
			parts = append(parts, e)
		}
	case *ast.DeclStmt:
		parts = append(parts, x)
	case *ast.SendStmt:
		parts = append(parts, x.Chan, x.Value)
	case *ast.IncDecStmt:
		parts = append(parts, x.X)
	case *ast.IfStmt:
		parts = append(parts, x.Init, x.Cond)
	case *ast.SwitchStmt:
		parts = append(parts, x.Init, x.Tag)
	case *ast.RangeStmt:
		parts = append(parts, x.X)
	case *ast.ForStmt:
		parts = append(parts, x.Init)
	}
	var calls []mustCall
	blocked := token.NoPos // end of the first call with possible effects
	for _, p := range parts {
		if p == nil || reflect.ValueOf(p).IsNil() {
			continue
		}
		ast.Inspect(p, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.BinaryExpr:
				if x.Op == token.LAND || x.Op == token.LOR {
					ast.Inspect(x.X, func(m ast.Node) bool { return h.visitCall(m, &calls, &blocked) })
					return false
				}
			case *ast.UnaryExpr:
				if x.Op == token.ARROW && (blocked == token.NoPos || x.End() < blocked) {
					blocked = x.End()
				}
			}
			return h.visitCall(n, &calls, &blocked)
		})
	}
	return calls
}

// visitCall records a hoistable Must call, and the end of the first other call.
func (h *hoister) visitCall(n ast.Node, calls *[]mustCall, blocked *token.Pos) bool {
	c, ok := n.(*ast.CallExpr)
	if !ok {
		return true
	}
	if id, ok := c.Fun.(*ast.Ident); ok && h.must[id.Name] && c.Ellipsis == token.NoPos {
		if *blocked == token.NoPos || c.Pos() < *blocked {
			if one, isCall := singleCall(c); (isCall && one) || len(c.Args) == mustArity[id.Name]+1 {
				*calls = append(*calls, mustCall{call: c, arity: mustArity[id.Name]})
				return false // its arguments are hoisted with it
			}
		}
	}
	if !pureCall(c) && (*blocked == token.NoPos || c.End() < *blocked) {
		*blocked = c.End()
	}
	return true
}

// singleCall reports whether c has one argument, and whether that is a call.
func singleCall(c *ast.CallExpr) (one, isCall bool) {
	if len(c.Args) != 1 {
		return false, false
	}
	_, isCall = c.Args[0].(*ast.CallExpr)
	return true, isCall
}

// pureNames are predeclared functions and types whose calls have no effect that moving
// a Must call before them could reorder.
var pureNames = map[string]bool{
	"len": true, "cap": true, "make": true, "new": true, "append": true, "complex": true,
	"real": true, "imag": true, "min": true, "max": true, "string": true, "int": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true, "float32": true,
	"float64": true, "complex64": true, "complex128": true, "byte": true, "rune": true,
	"bool": true, "any": true, "error": true,
}

func pureCall(c *ast.CallExpr) bool {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return pureNames[f.Name]
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true // a conversion
	case *ast.ParenExpr:
		_, star := f.X.(*ast.StarExpr)
		return star // (*T)(x)
	}
	return false
}

// lower returns the statements that evaluate the Must call c's arguments into
// temporaries and check its error, the expressions standing for its values, and the
// statements that drop the temporaries' values afterwards (top level only).
func (h *hoister) lower(c mustCall) (before []ast.Stmt, temps []ast.Expr, zero []ast.Stmt) {
	h.n++
	pos := c.call.Pos()
	ident := func(name string) *ast.Ident { return &ast.Ident{NamePos: pos, Name: name} }
	var lhs []ast.Expr
	for k := 0; k < c.arity; k++ {
		name := fmt.Sprintf("_gml_m%d_%d_%d", h.cell, h.n, k)
		lhs = append(lhs, ident(name))
		temps = append(temps, ident(name))
		if h.top {
			zero = append(zero, &ast.AssignStmt{
				Lhs: []ast.Expr{ident(name)}, TokPos: pos, Tok: token.ASSIGN,
				Rhs: []ast.Expr{&ast.CallExpr{Fun: ident("_gmlZero"), Lparen: pos, Args: []ast.Expr{ident(name)}, Rparen: pos}},
			})
		}
	}
	errName := fmt.Sprintf("_gml_e%d_%d", h.cell, h.n)
	lhs = append(lhs, ident(errName))
	text := exprText(h.fset, c.call)
	before = []ast.Stmt{
		&ast.AssignStmt{Lhs: lhs, TokPos: pos, Tok: token.DEFINE, Rhs: c.call.Args},
		&ast.ExprStmt{X: &ast.CallExpr{
			Fun: ident("_gmlCheck"), Lparen: pos, Rparen: pos,
			Args: []ast.Expr{ident(errName), h.str(text, pos), h.str(h.place(pos), pos)},
		}},
	}
	return before, temps, zero
}

// str returns a string literal at pos.
func (h *hoister) str(s string, pos token.Pos) *ast.BasicLit {
	return &ast.BasicLit{ValuePos: pos, Kind: token.STRING, Value: fmt.Sprintf("%q", s)}
}

// place returns the cell position of pos, "cell[N]:L:C".
func (h *hoister) place(pos token.Pos) string { return cleanPos(h.fset.Position(pos).String()) }

// replaceExpr replaces the expression old under n by the values vals: one value takes
// its place; several (Must2) replace it where it is the only expression of a list.
func replaceExpr(n ast.Node, old ast.Expr, vals []ast.Expr) {
	replaced := false
	fixList := func(list []ast.Expr) []ast.Expr {
		if len(list) == 1 && list[0] == old {
			replaced = true
			return vals
		}
		return list
	}
	switch x := n.(type) {
	case *ast.AssignStmt:
		x.Rhs = fixList(x.Rhs)
	case *ast.ReturnStmt:
		x.Results = fixList(x.Results)
	case *ast.DeclStmt:
		if g, ok := x.Decl.(*ast.GenDecl); ok {
			for _, s := range g.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					vs.Values = fixList(vs.Values)
				}
			}
		}
	case *ast.ExprStmt:
		if x.X == old {
			x.X = vals[0]
			replaced = true
		}
	}
	if replaced {
		return
	}
	// Anywhere else it stands for one value (the first, which is all Must has).
	var v reflect.Value
	ast.Inspect(n, func(m ast.Node) bool {
		if replaced || m == nil {
			return false
		}
		rv := reflect.ValueOf(m).Elem()
		for k := 0; k < rv.NumField(); k++ {
			f := rv.Field(k)
			switch {
			case f.Type() == reflect.TypeOf((*ast.Expr)(nil)).Elem() && !f.IsNil() && f.Interface() == ast.Expr(old):
				v = f
			case f.Kind() == reflect.Slice && f.Type().Elem() == reflect.TypeOf((*ast.Expr)(nil)).Elem():
				for j := 0; j < f.Len(); j++ {
					if !f.Index(j).IsNil() && f.Index(j).Interface() == ast.Expr(old) {
						v = f.Index(j)
					}
				}
			}
			if v.IsValid() {
				v.Set(reflect.ValueOf(vals[0]))
				replaced = true
				return false
			}
		}
		return true
	})
}

// isZeroing reports the statements hoistMust adds after a top-level statement.
func isZeroing(s ast.Stmt) bool {
	a, ok := s.(*ast.AssignStmt)
	if !ok || len(a.Rhs) != 1 {
		return false
	}
	c, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := c.Fun.(*ast.Ident)
	return ok && id.Name == "_gmlZero"
}

// exprText returns the source text of x as gofmt prints it, cut to one line of at most
// 80 bytes, for messages.
func exprText(fset *token.FileSet, x ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, x); err != nil {
		return "the call"
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// callee is the call of a cell's last expression, when its last result is an error:
// its source text and place.
type callee struct {
	src, pos string
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

// calleeResult replaces a cell's last expression x, when it is a call whose last
// result is an error (found by a probe compile, typeof.go), by
//
//	_gmlcell.Callee("F(args)", "cell[N]:L:C")
//	_gmlcell.Result(F(args))
//
// so that lastValue treats the error as the outcome of the call. list is the chunk's
// statements up to x's. It returns nil for other expressions, and for the error
// constructors (errors.New, fmt.Errorf, ...), whose error is the value asked for.
func (i *Interp) calleeResult(list []ast.Stmt, x ast.Expr) []ast.Stmt {
	call, ok := x.(*ast.CallExpr)
	if !ok || pureCall(call) {
		return nil
	}
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "errors" || (pkg.Name == "fmt" && sel.Sel.Name == "Errorf")) {
			return nil
		}
	}
	if !i.lastResultIsError(list, call) {
		return nil
	}
	fset := i.yi.FileSet()
	p := call.Pos()
	str := func(s string) *ast.BasicLit {
		return &ast.BasicLit{ValuePos: p, Kind: token.STRING, Value: fmt.Sprintf("%q", s)}
	}
	return append([]ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
		Fun:    &ast.SelectorExpr{X: &ast.Ident{NamePos: p, Name: cellPkg}, Sel: &ast.Ident{NamePos: p, Name: "Callee"}},
		Lparen: p, Rparen: p, Args: []ast.Expr{str(exprText(fset, call)), str(cleanPos(fset.Position(p).String()))},
	}}}, resultCall(x)...)
}

// isGeneric reports whether fun names a generic function: one a cell or the prelude
// declared, or one of a package interpreted from source.
func (i *Interp) isGeneric(fun ast.Expr) bool {
	name := ""
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		if pkg, ok := f.X.(*ast.Ident); ok {
			name = pkg.Name + "." + f.Sel.Name
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.generics[name]
}

// lastValue returns the result of a cell whose last expression gave vals. When that was
// a call whose last result is an error, a non-nil error fails the cell, naming the
// call, and a nil one is left out of the shown values.
func (i *Interp) lastValue(vals []any, c *callee) Result {
	if c != nil && len(vals) > 0 {
		if err, _ := vals[len(vals)-1].(error); err != nil {
			return Result{Err: &Error{Name: nameFailure, Value: err.Error(), Traceback: []string{
				nameFailure + ": " + err.Error(),
				"  returned by " + c.src + " at " + c.pos,
			}}}
		}
		vals = vals[:len(vals)-1]
		if len(vals) == 0 {
			return Result{}
		}
	}
	return Result{Data: bundle(vals, i.names()), Metadata: map[string]any{}}
}

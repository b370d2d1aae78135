package exec

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"reflect"
	"strings"
)

// Type inference for generic calls. yaegi v0.16.1 infers type arguments from the
// arguments' types, but not from a function literal's result type (Map(xs,
// func(int) string {...}) takes U = int), not in a variadic call (Sum(1.5, 2.5)), and
// not through a constraint's core type (F[S ~[]E, E any](s S)). When a chunk fails to
// compile with such an error, inferTypes infers the type arguments of the chunk's calls
// of known generic functions (declared by cells, by the prelude, or by a package
// interpreted from source) the way Go does, and writes them: Map[int, string](xs, ...).
// The argument types come from a probe of the chunk (typeof.go) in which the calls are
// replaced by _gmlArgs(args...), innermost call first; the unification runs on type
// expressions: parameter type against argument type, then each type parameter with a
// core type (~[]E) against its argument, then untyped constants take their default type
// (the largest kind among them) for the parameters still unbound.

// inferenceFailed reports compile errors that come from yaegi's type inference.
func inferenceFailed(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "undefined type for") || strings.Contains(msg, "cannot use type func") ||
		(strings.Contains(msg, "cannot use") && strings.Contains(msg, "as type"))
}

// genericCall is a call of a known generic function without type arguments.
type genericCall struct {
	call *ast.CallExpr
	sig  *ast.FuncType
}

// genericCalls returns the calls under root of known generic functions that give no
// type arguments, innermost first: all of them, or those at yaegi's weak spots.
func (i *Interp) genericCalls(root ast.Node, all bool) []genericCall {
	var out []genericCall
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, a := range c.Args {
				visit(a)
			}
			visit(c.Fun)
			if sig := i.genericSig(c.Fun); sig != nil && c.Ellipsis == token.NoPos && (all || weakSpot(c, sig)) {
				out = append(out, genericCall{call: c, sig: sig})
			}
			return false
		})
	}
	visit(root)
	return out
}

// weakSpot reports calls whose inference yaegi gets wrong: with a function literal or
// a constant argument, of a variadic function, or of one with a core-type constraint.
func weakSpot(c *ast.CallExpr, sig *ast.FuncType) bool {
	for _, a := range c.Args {
		if _, lit := a.(*ast.FuncLit); lit || untypedDefault(a) != "" {
			return true
		}
	}
	if n := len(sig.Params.List); n > 0 {
		if _, ok := sig.Params.List[n-1].Type.(*ast.Ellipsis); ok {
			return true
		}
	}
	for _, f := range sig.TypeParams.List {
		if coreType(f.Type) != nil {
			return true
		}
	}
	return false
}

// genericSig returns the signature of the generic function fun names, or nil.
func (i *Interp) genericSig(fun ast.Expr) *ast.FuncType {
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
	return i.genericSigs[name]
}

// inferTypes writes the type arguments of the generic calls of a chunk (see above): of
// all of them, or only of those at yaegi's weak spots (weakSpot). stmts is set for a
// statement chunk (probed as a function body), file otherwise. It reports whether it
// changed any call.
func (i *Interp) inferTypes(file *ast.File, stmts *ast.BlockStmt, all bool) bool {
	var root ast.Node = file
	if stmts != nil {
		root = stmts
	}
	changed := false
	for _, gc := range i.genericCalls(root, all) {
		types := i.argTypes(file, stmts, gc.call)
		if types == nil {
			continue
		}
		targs := inferCall(gc.sig, types)
		if targs == nil {
			continue
		}
		pos := gc.call.Fun.End()
		if len(targs) == 1 {
			gc.call.Fun = &ast.IndexExpr{X: gc.call.Fun, Lbrack: pos, Index: targs[0], Rbrack: pos}
		} else {
			gc.call.Fun = &ast.IndexListExpr{X: gc.call.Fun, Lbrack: pos, Indices: targs, Rbrack: pos}
		}
		changed = true
	}
	return changed
}

// argTypes returns the types of the arguments of call, as type expressions; an untyped
// constant gives "untyped " and its default type. The types come from a probe in which
// the statement holding the call is replaced by `_gmlArgs(args...)` and the statements
// after it in its list are left out. It returns nil when the probe fails.
func (i *Interp) argTypes(file *ast.File, stmts *ast.BlockStmt, call *ast.CallExpr) []string {
	var root ast.Node = file
	if stmts != nil {
		root = stmts
	}
	list, k := enclosingList(root, call)
	if list == nil {
		return nil
	}
	saved := *list
	p := call.Pos()
	*list = append(append([]ast.Stmt{}, saved[:k]...), &ast.ExprStmt{X: &ast.CallExpr{
		Fun: &ast.Ident{NamePos: p, Name: "_gmlArgs"}, Lparen: p, Args: call.Args, Rparen: call.End(),
	}})
	defer func() { *list = saved }()
	var tree reflect.Value
	if stmts != nil {
		r, ok := i.probe(stmts.List)
		if !ok {
			return nil
		}
		tree = r
	} else {
		prog, err := i.probeCompile(file)
		if err != nil {
			return nil
		}
		tree = unexported(reflect.ValueOf(prog).Elem(), "root")
	}
	var out []string
	for _, a := range call.Args {
		if d := untypedDefault(a); d != "" {
			out = append(out, "untyped "+d)
			continue
		}
		n := findNode(tree, a.Pos(), func(e reflect.Value) bool {
			t := unexported(e, "typ")
			return t.IsValid() && !t.IsNil()
		})
		if !n.IsValid() {
			return nil
		}
		src, err := i.typeSource(unexported(n.Elem(), "typ"), 0)
		if err != nil {
			return nil
		}
		out = append(out, src)
	}
	return out
}

// untypedDefault returns the default type of a constant literal argument (possibly
// negated or parenthesised), or "".
func untypedDefault(e ast.Expr) string {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return map[token.Token]string{token.INT: "int", token.FLOAT: "float64", token.IMAG: "complex128", token.CHAR: "rune", token.STRING: "string"}[x.Kind]
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD {
			return untypedDefault(x.X)
		}
	}
	return ""
}

// enclosingList returns the innermost statement list under root holding a statement
// that contains n, and that statement's index; nil when there is none. Containment is
// structural: rewritten code carries the positions of the code it stands for.
func enclosingList(root ast.Node, n ast.Node) (*[]ast.Stmt, int) {
	type frame struct {
		list *[]ast.Stmt
		idx  int
	}
	var found *frame
	var visit func(m ast.Node, in *frame) bool
	visit = func(m ast.Node, in *frame) bool {
		if found != nil {
			return false
		}
		if m == n {
			found = in
			return false
		}
		var l *[]ast.Stmt
		switch x := m.(type) {
		case *ast.BlockStmt:
			l = &x.List
		case *ast.CaseClause:
			l = &x.Body
		case *ast.CommClause:
			l = &x.Body
		}
		if l != nil {
			for k, s := range *l {
				visit(s, &frame{l, k})
			}
			return false
		}
		ast.Inspect(m, func(c ast.Node) bool {
			if c == nil || c == m {
				return c == m
			}
			visit(c, in)
			return false
		})
		return false
	}
	visit(root, nil)
	if found == nil {
		return nil, -1
	}
	return found.list, found.idx
}

// untypedRank orders the default types of untyped constants: a mix takes the largest.
var untypedRank = map[string]int{"int": 1, "rune": 2, "float64": 3, "complex128": 4}

// inferCall infers the type arguments of a call of a function with signature sig from
// the types of its arguments; nil when some stays unknown.
func inferCall(sig *ast.FuncType, args []string) []ast.Expr {
	tparams := map[string]bool{}
	var order []string
	constraints := map[string]ast.Expr{}
	for _, f := range sig.TypeParams.List {
		for _, n := range f.Names {
			tparams[n.Name] = true
			order = append(order, n.Name)
			constraints[n.Name] = f.Type
		}
	}
	u := &unifier{tparams: tparams, bound: map[string]ast.Expr{}}
	var params []ast.Expr
	variadic := false
	for _, f := range sig.Params.List {
		t := f.Type
		if e, ok := t.(*ast.Ellipsis); ok {
			t, variadic = e.Elt, true
		}
		for range max(1, len(f.Names)) {
			params = append(params, t)
		}
	}
	untyped := map[string]string{} // type parameter -> default type of its constants
	for k, a := range args {
		p := params[min(k, len(params)-1)]
		if k >= len(params) && !variadic {
			return nil
		}
		if d, ok := strings.CutPrefix(a, "untyped "); ok {
			if id, isParam := p.(*ast.Ident); isParam && tparams[id.Name] {
				if untypedRank[d] > untypedRank[untyped[id.Name]] {
					untyped[id.Name] = d
				}
			}
			continue
		}
		at, err := parser.ParseExpr(a)
		if err != nil || !u.unify(p, at) {
			return nil
		}
	}
	// Core types: S ~[]E bound to []int gives E = int.
	for changed := true; changed; {
		changed = false
		for _, name := range order {
			b, ok := u.bound[name]
			core := coreType(constraints[name])
			if !ok || core == nil {
				continue
			}
			before := len(u.bound)
			if !u.unify(core, b) {
				return nil
			}
			changed = changed || len(u.bound) > before
		}
	}
	var out []ast.Expr
	for _, name := range order {
		b, ok := u.bound[name]
		if !ok {
			d, ok := untyped[name]
			if !ok {
				return nil
			}
			b = &ast.Ident{Name: d}
		}
		out = append(out, b)
	}
	return out
}

// coreType returns T of a constraint ~T or T (a single term that is not an interface
// name), or nil.
func coreType(c ast.Expr) ast.Expr {
	if u, ok := c.(*ast.UnaryExpr); ok && u.Op == token.TILDE {
		return u.X
	}
	switch c.(type) {
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.StarExpr:
		return c
	}
	return nil
}

// unifier binds type parameters to type expressions.
type unifier struct {
	tparams map[string]bool
	bound   map[string]ast.Expr
}

// unify matches the parameter type p against the argument type a, binding type
// parameters; it reports whether they match.
func (u *unifier) unify(p, a ast.Expr) bool {
	if id, ok := p.(*ast.Ident); ok && u.tparams[id.Name] {
		if b, ok := u.bound[id.Name]; ok {
			return typeString(b) == typeString(a)
		}
		u.bound[id.Name] = a
		return true
	}
	switch p := p.(type) {
	case *ast.StarExpr:
		a, ok := a.(*ast.StarExpr)
		return ok && u.unify(p.X, a.X)
	case *ast.ArrayType:
		a, ok := a.(*ast.ArrayType)
		return ok && (p.Len == nil) == (a.Len == nil) && u.unify(p.Elt, a.Elt)
	case *ast.MapType:
		a, ok := a.(*ast.MapType)
		return ok && u.unify(p.Key, a.Key) && u.unify(p.Value, a.Value)
	case *ast.ChanType:
		a, ok := a.(*ast.ChanType)
		return ok && u.unify(p.Value, a.Value)
	case *ast.Ellipsis:
		a, ok := a.(*ast.Ellipsis)
		return ok && u.unify(p.Elt, a.Elt)
	case *ast.FuncType:
		a, ok := a.(*ast.FuncType)
		if !ok {
			return false
		}
		return u.unifyFields(p.Params, a.Params) && u.unifyFields(p.Results, a.Results)
	case *ast.IndexExpr:
		a, ok := a.(*ast.IndexExpr)
		return ok && typeString(p.X) == typeString(a.X) && u.unify(p.Index, a.Index)
	case *ast.IndexListExpr:
		a, ok := a.(*ast.IndexListExpr)
		if !ok || typeString(p.X) != typeString(a.X) || len(p.Indices) != len(a.Indices) {
			return false
		}
		for k := range p.Indices {
			if !u.unify(p.Indices[k], a.Indices[k]) {
				return false
			}
		}
		return true
	}
	return typeString(p) == typeString(a)
}

// unifyFields unifies two parameter or result lists, name by name.
func (u *unifier) unifyFields(p, a *ast.FieldList) bool {
	pt, at := fieldTypes(p), fieldTypes(a)
	if len(pt) != len(at) {
		return false
	}
	for k := range pt {
		if !u.unify(pt[k], at[k]) {
			return false
		}
	}
	return true
}

// fieldTypes returns one type per name of a field list.
func fieldTypes(l *ast.FieldList) []ast.Expr {
	if l == nil {
		return nil
	}
	var out []ast.Expr
	for _, f := range l.List {
		for range max(1, len(f.Names)) {
			out = append(out, f.Type)
		}
	}
	return out
}

// typeString prints a type expression.
func typeString(e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}

// simplifyCoreTypes rewrites the generic functions of f whose type parameters have a
// core-type constraint, F[S ~[]E, E any](s S) S, as F[E any](s []E) []E: yaegi v0.16.1
// can neither infer nor instantiate the first form. The function then takes and
// returns the core type ([]E) rather than the named type S; values of a named slice
// type convert implicitly on the way in.
func simplifyCoreTypes(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Type.TypeParams == nil {
			continue
		}
		subst := map[string]ast.Expr{}
		var kept []*ast.Field
		for _, field := range fd.Type.TypeParams.List {
			core := coreType(field.Type)
			if core == nil || len(field.Names) != 1 {
				kept = append(kept, field)
				continue
			}
			subst[field.Names[0].Name] = core
		}
		if len(subst) == 0 || len(kept) == 0 {
			continue
		}
		fd.Type.TypeParams.List = kept
		replaceIdents(fd.Type, subst)
		if fd.Body != nil {
			replaceIdents(fd.Body, subst)
		}
	}
}

// replaceIdents replaces the identifiers under n named by subst's keys (not field or
// method names after a dot) by their expressions.
func replaceIdents(n ast.Node, subst map[string]ast.Expr) {
	exprType := reflect.TypeOf((*ast.Expr)(nil)).Elem()
	swap := func(f reflect.Value) {
		if id, ok := f.Interface().(*ast.Ident); ok {
			if e, ok := subst[id.Name]; ok {
				f.Set(reflect.ValueOf(e))
			}
		}
	}
	ast.Inspect(n, func(m ast.Node) bool {
		if m == nil {
			return false
		}
		if sel, ok := m.(*ast.SelectorExpr); ok {
			replaceIdents(sel.X, subst)
			if id, ok := sel.X.(*ast.Ident); ok {
				if e, ok := subst[id.Name]; ok {
					sel.X = e
				}
			}
			return false
		}
		v := reflect.ValueOf(m).Elem()
		if v.Kind() != reflect.Struct {
			return true
		}
		for k := 0; k < v.NumField(); k++ {
			f := v.Field(k)
			if f.Type() == exprType && !f.IsNil() {
				swap(f)
			}
			if f.Kind() == reflect.Slice && f.Type().Elem() == exprType {
				for j := 0; j < f.Len(); j++ {
					swap(f.Index(j))
				}
			}
		}
		return true
	})
}

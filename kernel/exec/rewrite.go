package exec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
)

// cellPkg is the name under which every kernel imports its helper package (the
// goroutine-panic guard and the result collector). The underscore keeps it out of the
// way of user names.
const cellPkg = "_gmlcell"

// cellPkgPath is the import path of the helper package, private to each interpreter.
const cellPkgPath = "gml.internal/cell"

// rewriteGo makes every `go` statement under n run its call under a deferred recover
// that reports the panic to the interpreter, tagged with the cell's number: a panic in
// a goroutine would otherwise kill the process. For `go func(...){...}(args)` the guard
// goes into the literal's body, so arguments are still evaluated by the go statement;
// any other call is wrapped in a function literal, so its arguments are evaluated in the
// new goroutine (documented in doc.go).
func rewriteGo(n ast.Node, cell int) {
	ast.Inspect(n, func(n ast.Node) bool {
		g, ok := n.(*ast.GoStmt)
		if !ok {
			return true
		}
		guard := goGuard(cell, g.Go)
		if lit, ok := g.Call.Fun.(*ast.FuncLit); ok {
			lit.Body.List = append([]ast.Stmt{guard}, lit.Body.List...)
			return true
		}
		g.Call = callLit(g.Go, g.Call.End(), guard, &ast.ExprStmt{X: g.Call})
		return true
	})
}

// goGuard returns `defer func() { if r := recover(); r != nil { _gmlcell.GoPanic(cell, r) } }()`
// with every position set to pos, the go statement's.
func goGuard(cell int, pos token.Pos) ast.Stmt {
	src := fmt.Sprintf("func() { defer func() { if r := recover(); r != nil { %s.GoPanic(%d, r) } }() }", cellPkg, cell)
	e, err := parser.ParseExpr(src)
	if err != nil {
		panic("exec: the goroutine guard does not parse: " + err.Error())
	}
	stmt := e.(*ast.FuncLit).Body.List[0]
	setPos(stmt, pos)
	return stmt
}

// resultCall wraps the expression x as `_gmlcell.Result(x)`, which hands the values
// of the cell's last expression (one or several) to the interpreter.
func resultCall(x ast.Expr) []ast.Stmt {
	p := x.Pos()
	return []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
		Fun:    &ast.SelectorExpr{X: &ast.Ident{NamePos: p, Name: cellPkg}, Sel: &ast.Ident{NamePos: p, Name: "Result"}},
		Lparen: p, Args: []ast.Expr{x}, Rparen: x.End(),
	}}}
}

// setPos sets every token.Pos field in the tree under n to pos, so that nodes made by
// the rewriter report the position of the user's code they stand for.
func setPos(n ast.Node, pos token.Pos) {
	posType := reflect.TypeOf(token.NoPos)
	ast.Inspect(n, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		v := reflect.ValueOf(n)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return true
		}
		v = v.Elem()
		for i := 0; i < v.NumField(); i++ {
			// A set Ellipsis would turn f(x) into f(x...).
			if f := v.Field(i); f.Type() == posType && f.CanSet() && v.Type().Field(i).Name != "Ellipsis" {
				f.Set(reflect.ValueOf(pos))
			}
		}
		return true
	})
}

// rewriteLoopVars gives loops under n the per-iteration variables of Go 1.22: when a
// loop's body captures one of its := variables v (in a function literal, which includes
// rewritten go statements, or with &), the loop's own variable is renamed _gml_v and the
// body starts with `v := _gml_v`.
// A three-clause loop whose body assigns to the variable is left alone, since the copy
// would hide the assignment from the loop's condition and post statement; such a loop
// keeps the old semantics (documented in doc.go).
func rewriteLoopVars(n ast.Node) {
	ast.Inspect(n, func(n ast.Node) bool {
		var names []*ast.Ident
		var body *ast.BlockStmt
		threeClause := false
		switch l := n.(type) {
		case *ast.ForStmt:
			init, ok := l.Init.(*ast.AssignStmt)
			if !ok || init.Tok != token.DEFINE {
				return true
			}
			for _, e := range init.Lhs {
				if id, ok := e.(*ast.Ident); ok {
					names = append(names, id)
				}
			}
			body, threeClause = l.Body, true
		case *ast.RangeStmt:
			if l.Tok != token.DEFINE {
				return true
			}
			for _, e := range []ast.Expr{l.Key, l.Value} {
				if id, ok := e.(*ast.Ident); ok {
					names = append(names, id)
				}
			}
			body = l.Body
		default:
			return true
		}
		var copies []*ast.Ident
		for _, id := range names {
			if id.Name == "_" || !captures(body, id.Name) || (threeClause && assigns(body, id.Name)) {
				continue
			}
			copies = append(copies, id)
		}
		if len(copies) == 0 {
			return true
		}
		lhs := make([]ast.Expr, len(copies))
		rhs := make([]ast.Expr, len(copies))
		for i, id := range copies {
			// yaegi does not keep a body's `v := v` apart from the loop's v (the post
			// statement and the range assignment see the body's), so the loop's own
			// variable gets a private name and the body a copy under the user's name.
			private := "_gml_" + id.Name
			lhs[i] = &ast.Ident{NamePos: id.NamePos, Name: id.Name}
			rhs[i] = &ast.Ident{NamePos: id.NamePos, Name: private}
			if threeClause {
				renameIn(n.(*ast.ForStmt), id.Name, private)
			} else {
				id.Name = private
			}
		}
		cp := &ast.AssignStmt{Lhs: lhs, TokPos: body.Lbrace, Tok: token.DEFINE, Rhs: rhs}
		body.List = append([]ast.Stmt{cp}, body.List...)
		return true
	})
}

// renameIn renames the variable from to to in the init, condition and post statement
// of a loop (not in its body), leaving field and method names alone.
func renameIn(l *ast.ForStmt, from, to string) {
	for _, n := range []ast.Node{l.Init, l.Cond, l.Post} {
		if n == nil || reflect.ValueOf(n).IsNil() {
			continue
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(x.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok && id.Name == from {
						id.Name = to
					}
					return true
				})
				return false
			case *ast.Ident:
				if x.Name == from {
					x.Name = to
				}
			}
			return true
		})
	}
}

// captures reports whether body refers to name inside a function literal or takes its
// address.
func captures(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			if mentions(x.Body, name) {
				found = true
			}
			return false
		case *ast.UnaryExpr:
			if id, ok := x.X.(*ast.Ident); ok && x.Op == token.AND && id.Name == name {
				found = true
			}
		}
		return true
	})
	return found
}

func mentions(n ast.Node, name string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// assigns reports whether body assigns to name (=, op=, ++, --).
func assigns(body *ast.BlockStmt, name string) bool {
	is := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == name
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok != token.DEFINE {
				for _, e := range x.Lhs {
					found = found || is(e)
				}
			}
		case *ast.IncDecStmt:
			found = found || is(x.X)
		}
		return !found
	})
	return found
}

// wrapCompound puts each compound statement at the top level of a statement chunk
// (for, range, if, switch, select, block, labeled) inside `func() { ... }()`. yaegi
// runs top-level statements in the global frame, where a variable declared in a block
// reuses any global of the same name left by an earlier cell (a loop's `i`), so a
// per-iteration copy would be one shared variable. Inside a function they are real
// locals. Assignments to globals are unaffected; a defer inside such a statement runs
// when the statement ends.
func wrapCompound(body *ast.BlockStmt) {
	for k, s := range body.List {
		switch s.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt,
			*ast.SelectStmt, *ast.BlockStmt, *ast.LabeledStmt:
			body.List[k] = &ast.ExprStmt{X: callLit(s.Pos(), s.End(), s)}
		}
	}
}

// callLit returns `func() { stmts }()`, positioned from pos to end.
func callLit(pos, end token.Pos, stmts ...ast.Stmt) *ast.CallExpr {
	return &ast.CallExpr{
		Fun: &ast.FuncLit{
			Type: &ast.FuncType{Func: pos, Params: &ast.FieldList{Opening: pos, Closing: pos}},
			Body: &ast.BlockStmt{Lbrace: pos, List: stmts, Rbrace: end},
		},
		Lparen: end, Rparen: end,
	}
}

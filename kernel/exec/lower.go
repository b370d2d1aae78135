package exec

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io"
	"log"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Lowering of Go 1.22+ constructs yaegi v0.16.1 does not know (README "Go in cells").
//
// Range over an integer or a function: yaegi's compiler panics ("nil type") on both,
// and which one a `for x := range e` is depends on e's type, which only the interpreter
// knows. A chunk is therefore compiled as written first; only when that panics does
// searchRanges decide, range statement by range statement (outer first), how each is
// lowered: it compiles probes (never run, leaving no trace) of the chunk with the
// statement lowered each possible way, the undecided ones after it reduced to `_ = e`,
// and keeps the first way that compiles. An integer literal needs no probe.
//
//	for i := range n { body }
//	  =>  { _gml_n := n; for _gml_i := _gml_n - _gml_n; _gml_i < _gml_n; _gml_i++ { i := _gml_i; body } }
//	      (the copy only when body assigns, captures or takes the address of i)
//
//	for k, v := range seq { body }
//	  =>  { _gml_s := seq; _gml_k, _gml_v := _gmlZero2(_gml_s); var _gml_c int
//	        _gmlSeq2(_gml_s, &_gml_k, &_gml_v, func() bool { k, v := _gml_k, _gml_v; body'; return true })
//	        if _gml_c == -1 { return ... } }
//
// In body', continue becomes `return true`, break `return false`, and a return, or a
// break or continue to an outer label, records what to do in _gml_c, returns false, and
// is done after the iterator returns. goto out of the body and defer in it are refused
// with an error (a deferred call would run at the end of each iteration).
//
// min and max are the prelude's generic functions; yaegi infers their type from the
// first argument, so max(1, 2.5) would be an int. lowerMinMax folds calls whose
// arguments are all constants, as Go does, and moves constant arguments after the
// others so that a typed argument fixes the type.

// rangeKind is how a range statement is lowered.
type rangeKind int

const (
	rangeNative rangeKind = iota // left to yaegi: slice, array, string, map, channel
	rangeInt
	rangeSeq0 // func(yield func() bool)
	rangeSeq1 // func(yield func(V) bool)
	rangeSeq2 // func(yield func(K, V) bool)
	rangeStub // undecided while probing: the statement becomes `_ = e`
)

// rangeCandidates returns the range statements under n that may range over an integer
// or a function, in source order (outer first): all but those over literals.
func rangeCandidates(n ast.Node) []*ast.RangeStmt {
	var out []*ast.RangeStmt
	ast.Inspect(n, func(n ast.Node) bool {
		r, ok := n.(*ast.RangeStmt)
		if !ok {
			return true
		}
		switch x := ast.Unparen(r.X).(type) {
		case *ast.CompositeLit:
			return true
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				return true
			}
		case *ast.CallExpr:
			if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "make" {
				return true
			}
		case *ast.SliceExpr:
			return true
		}
		out = append(out, r)
		return true
	})
	return out
}

// defaultKind is the kind of a range statement known without a probe: an integer
// literal or a len or cap call ranges over an integer; anything else is left to yaegi.
func defaultKind(r *ast.RangeStmt) rangeKind {
	switch x := ast.Unparen(r.X).(type) {
	case *ast.BasicLit:
		if x.Kind == token.INT || x.Kind == token.CHAR {
			return rangeInt
		}
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") {
			return rangeInt
		}
	}
	return rangeNative
}

// staticKinds decides the lowering of the range statements under root that range over
// a parameter of the enclosing function whose declared type says it: an integer type,
// a function taking a yield function, or iter.Seq and iter.Seq2. The body of a generic
// function is compiled only when it is instantiated, so probes cannot decide there.
func staticKinds(root ast.Node) map[*ast.RangeStmt]rangeKind {
	kinds := map[*ast.RangeStmt]rangeKind{}
	var visit func(n ast.Node, params map[string]ast.Expr)
	visit = func(n ast.Node, params map[string]ast.Expr) {
		ast.Inspect(n, func(n ast.Node) bool {
			var ft *ast.FuncType
			var body *ast.BlockStmt
			switch x := n.(type) {
			case *ast.FuncDecl:
				ft, body = x.Type, x.Body
			case *ast.FuncLit:
				ft, body = x.Type, x.Body
			case *ast.RangeStmt:
				if id, ok := x.X.(*ast.Ident); ok {
					if k, ok := kindOfType(params[id.Name]); ok {
						kinds[x] = k
					}
				}
				return true
			default:
				return true
			}
			if body == nil {
				return false
			}
			inner := map[string]ast.Expr{}
			for k, v := range params {
				inner[k] = v
			}
			for _, f := range ft.Params.List {
				for _, id := range f.Names {
					inner[id.Name] = f.Type
				}
			}
			visit(body, inner)
			return false
		})
	}
	visit(root, map[string]ast.Expr{})
	return kinds
}

// kindOfType returns the range kind of a declared type, when it tells.
func kindOfType(t ast.Expr) (rangeKind, bool) {
	switch x := t.(type) {
	case *ast.Ident:
		switch x.Name {
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "byte", "rune":
			return rangeInt, true
		}
	case *ast.IndexExpr:
		switch typeString(x.X) {
		case "iter.Seq", "_gml_iter_Seq":
			return rangeSeq1, true
		}
	case *ast.IndexListExpr:
		switch typeString(x.X) {
		case "iter.Seq2", "_gml_iter_Seq2":
			return rangeSeq2, true
		}
	case *ast.FuncType:
		if x.Params == nil || len(x.Params.List) != 1 || (x.Results != nil && len(x.Results.List) > 0) {
			return 0, false
		}
		yield, ok := x.Params.List[0].Type.(*ast.FuncType)
		if !ok || yield.Results == nil || len(yield.Results.List) != 1 || typeString(yield.Results.List[0].Type) != "bool" {
			return 0, false
		}
		switch len(fieldTypes(yield.Params)) {
		case 0:
			return rangeSeq0, true
		case 1:
			return rangeSeq1, true
		case 2:
			return rangeSeq2, true
		}
	}
	return 0, false
}

// kindsToTry lists the kinds a range statement may have, by its number of variables.
func kindsToTry(r *ast.RangeStmt) []rangeKind {
	switch {
	case r.Value != nil:
		return []rangeKind{rangeNative, rangeSeq2}
	case r.Key != nil:
		return []rangeKind{rangeNative, rangeInt, rangeSeq1, rangeSeq2}
	}
	return []rangeKind{rangeNative, rangeInt, rangeSeq0, rangeSeq1, rangeSeq2}
}

// lowerer rewrites the range statements of one chunk.
type lowerer struct {
	fset  *token.FileSet
	kinds map[*ast.RangeStmt]rangeKind
	n     int // numbers the temporaries of each lowered statement
	err   error
}

// lowerRanges lowers the range statements under root (a file) by kinds (missing ones
// get defaultKind). Loops are lowered innermost first so that the statements an inner
// lowering leaves after its iterator call are lowered with the outer loop's body. It
// returns the first error (goto or defer in a function-range body).
func lowerRanges(fset *token.FileSet, root ast.Node, kinds map[*ast.RangeStmt]rangeKind) error {
	l := &lowerer{fset: fset, kinds: kinds}
	l.walk(root, nil)
	return l.err
}

// walk lowers the statement lists under n; results is the result list of the innermost
// enclosing function.
func (l *lowerer) walk(n ast.Node, results *ast.FieldList) {
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Body != nil {
				l.walk(x.Body, x.Type.Results)
			}
			return false
		case *ast.FuncLit:
			l.walk(x.Body, x.Type.Results)
			return false
		case *ast.BlockStmt:
			l.list(&x.List, results)
			return false
		case *ast.CaseClause:
			l.list(&x.Body, results)
			return false
		case *ast.CommClause:
			l.list(&x.Body, results)
			return false
		}
		return true
	})
}

// list lowers the range statements of a statement list (after everything nested in
// each statement).
func (l *lowerer) list(list *[]ast.Stmt, results *ast.FieldList) {
	for k, s := range *list {
		label := ""
		inner := s
		if ls, ok := s.(*ast.LabeledStmt); ok {
			label, inner = ls.Label.Name, ls.Stmt
		}
		// Nested statements first.
		switch x := inner.(type) {
		case *ast.RangeStmt:
			l.walk(x.Body, results)
		default:
			l.walk(inner, results)
		}
		r, ok := inner.(*ast.RangeStmt)
		if !ok {
			continue
		}
		kind, ok := l.kinds[r]
		if !ok {
			kind = defaultKind(r)
		}
		var repl ast.Stmt
		switch kind {
		case rangeNative:
			continue
		case rangeStub:
			repl = &ast.AssignStmt{Lhs: []ast.Expr{&ast.Ident{NamePos: r.For, Name: "_"}}, TokPos: r.For, Tok: token.ASSIGN, Rhs: []ast.Expr{r.X}}
		case rangeInt:
			repl = l.lowerInt(r, label)
		default:
			repl = l.lowerSeq(r, kind, label, results)
		}
		(*list)[k] = repl
	}
}

// tmpl parses src (statements) into a block positioned at pos, then puts exprs in place
// of the identifiers named by their keys and stmts in place of the expression
// statements naming theirs.
func tmpl(src string, pos token.Pos, exprs map[string]ast.Expr, stmts map[string][]ast.Stmt) *ast.BlockStmt {
	e, err := parser.ParseExpr("func() {\n" + src + "\n}")
	if err != nil {
		panic("exec: a lowering template does not parse: " + err.Error() + "\n" + src)
	}
	b := e.(*ast.FuncLit).Body
	setPos(b, pos)
	exprType := reflect.TypeOf((*ast.Expr)(nil)).Elem()
	ast.Inspect(b, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		v := reflect.ValueOf(n).Elem()
		for k := 0; k < v.NumField(); k++ {
			f := v.Field(k)
			if f.Type() == exprType && !f.IsNil() {
				if id, ok := f.Interface().(*ast.Ident); ok && exprs[id.Name] != nil {
					f.Set(reflect.ValueOf(exprs[id.Name]))
				}
			}
			if f.Kind() == reflect.Slice && f.Type().Elem() == exprType {
				for j := 0; j < f.Len(); j++ {
					if id, ok := f.Index(j).Interface().(*ast.Ident); ok && exprs[id.Name] != nil {
						f.Index(j).Set(reflect.ValueOf(exprs[id.Name]))
					}
				}
			}
		}
		var list *[]ast.Stmt
		switch x := n.(type) {
		case *ast.BlockStmt:
			list = &x.List
		case *ast.CaseClause:
			list = &x.Body
		}
		if list != nil {
			var out []ast.Stmt
			for _, s := range *list {
				if es, ok := s.(*ast.ExprStmt); ok {
					if id, ok := es.X.(*ast.Ident); ok {
						if repl, ok := stmts[id.Name]; ok {
							out = append(out, repl...)
							continue
						}
					}
				}
				out = append(out, s)
			}
			*list = out
		}
		return true
	})
	return b
}

// lowerInt lowers a range over an integer.
func (l *lowerer) lowerInt(r *ast.RangeStmt, label string) ast.Stmt {
	l.n++
	n, i := fmt.Sprintf("_gml_n%d", l.n), fmt.Sprintf("_gml_i%d", l.n)
	key, _ := r.Key.(*ast.Ident)
	if key != nil && key.Name == "_" {
		key = nil
	}
	loopVar := i
	var bind []ast.Stmt
	if key != nil {
		if r.Tok == token.DEFINE && !captures(r.Body, key.Name) && !assigns(r.Body, key.Name) {
			loopVar = key.Name // the common case: the variable itself counts
		} else {
			bind = []ast.Stmt{&ast.AssignStmt{Lhs: []ast.Expr{key}, TokPos: r.For, Tok: r.Tok, Rhs: []ast.Expr{&ast.Ident{NamePos: r.For, Name: i}}}}
		}
	}
	if label != "" {
		label += ":\n"
	}
	src := fmt.Sprintf("%[1]s := _gml_X_\n%[3]sfor %[2]s := %[1]s - %[1]s; %[2]s < %[1]s; %[2]s++ {\n_gml_BIND_\n_gml_BODY_\n}", n, loopVar, label)
	return tmpl(src, r.For, map[string]ast.Expr{"_gml_X_": r.X}, map[string][]ast.Stmt{"_gml_BIND_": bind, "_gml_BODY_": r.Body.List})
}

// jump is a break or continue to a label outside a lowered body, done after the
// iterator returns.
type jump struct {
	code  int
	tok   token.Token
	label string
}

// lowerSeq lowers a range over a function.
func (l *lowerer) lowerSeq(r *ast.RangeStmt, kind rangeKind, label string, results *ast.FieldList) ast.Stmt {
	l.n++
	id := l.n
	s, k, v, c := fmt.Sprintf("_gml_s%d", id), fmt.Sprintf("_gml_k%d", id), fmt.Sprintf("_gml_v%d", id), fmt.Sprintf("_gml_c%d", id)
	var zero, call string
	switch kind {
	case rangeSeq0:
		call = fmt.Sprintf("_gmlSeq0(%s, func() bool {\n_gml_BIND_\n_gml_BODY_\nreturn true\n})", s)
	case rangeSeq1:
		zero = fmt.Sprintf("%s := _gmlZero1(%s)", k, s)
		call = fmt.Sprintf("_gmlSeq1(%s, &%s, func() bool {\n_gml_BIND_\n_gml_BODY_\nreturn true\n})", s, k)
	case rangeSeq2:
		zero = fmt.Sprintf("%s, %s := _gmlZero2(%s)", k, v, s)
		call = fmt.Sprintf("_gmlSeq2(%s, &%s, &%s, func() bool {\n_gml_BIND_\n_gml_BODY_\nreturn true\n})", s, k, v)
	}
	// The loop's variables, fresh in each iteration.
	var lhs, rhs []ast.Expr
	for j, e := range []ast.Expr{r.Key, r.Value} {
		if id, ok := e.(*ast.Ident); ok && id.Name == "_" || e == nil {
			continue
		}
		lhs = append(lhs, e)
		rhs = append(rhs, &ast.Ident{NamePos: r.For, Name: []string{k, v}[j]})
	}
	var bind []ast.Stmt
	if len(lhs) > 0 {
		bind = []ast.Stmt{&ast.AssignStmt{Lhs: lhs, TokPos: r.For, Tok: r.Tok, Rhs: rhs}}
	}
	// Control flow leaving the body.
	named := results != nil && len(results.List) > 0 && len(results.List[0].Names) > 0
	var rets []*ast.Field
	if results != nil && !named {
		rets = results.List
	}
	var retVars []string
	for _, f := range rets {
		for range max(1, len(f.Names)) {
			retVars = append(retVars, fmt.Sprintf("_gml_r%d_%d", id, len(retVars)))
		}
	}
	if named {
		for _, f := range results.List {
			for _, n := range f.Names {
				retVars = append(retVars, n.Name)
			}
		}
	}
	var jumps []jump
	returns := false
	body := l.rewriteBody(r.Body, label, c, retVars, &jumps, &returns)
	var decls []ast.Stmt
	if returns {
		n := 0
		for _, f := range rets {
			for range max(1, len(f.Names)) {
				decls = append(decls, &ast.DeclStmt{Decl: &ast.GenDecl{TokPos: r.For, Tok: token.VAR, Specs: []ast.Spec{
					&ast.ValueSpec{Names: []*ast.Ident{{NamePos: r.For, Name: retVars[n]}}, Type: f.Type},
				}}})
				n++
			}
		}
	}
	var after strings.Builder
	if returns && named {
		fmt.Fprintf(&after, "if %s == -1 {\nreturn\n}\n", c)
	} else if returns {
		fmt.Fprintf(&after, "if %s == -1 {\nreturn %s\n}\n", c, strings.Join(retVars, ", "))
	}
	for _, j := range jumps {
		fmt.Fprintf(&after, "if %s == %d {\n%s %s\n}\n", c, j.code, j.tok, j.label)
	}
	src := fmt.Sprintf("%s := _gml_X_\n%s\nvar %s int\n_ = %s\n_gml_DECLS_\n%s\n%s", s, zero, c, c, call, after.String())
	return tmpl(src, r.For, map[string]ast.Expr{"_gml_X_": r.X},
		map[string][]ast.Stmt{"_gml_BIND_": bind, "_gml_BODY_": body.List, "_gml_DECLS_": decls})
}

// rewriteBody rewrites the body of a function-range loop labelled label (or "") as the
// body of its yield function: see the comment at the top of the file. c is the name of
// the control variable and retVars the temporaries of the enclosing function's results,
// or its named results.
func (l *lowerer) rewriteBody(body *ast.BlockStmt, label, c string, retVars []string, jumps *[]jump, returns *bool) *ast.BlockStmt {
	inner := map[string]bool{} // labels declared inside the body
	ast.Inspect(body, func(n ast.Node) bool {
		if ls, ok := n.(*ast.LabeledStmt); ok {
			inner[ls.Label.Name] = true
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	pos := body.Lbrace
	ret := func(b bool) ast.Stmt {
		return &ast.ReturnStmt{Return: pos, Results: []ast.Expr{&ast.Ident{NamePos: pos, Name: strconv.FormatBool(b)}}}
	}
	set := func(code int) ast.Stmt {
		return &ast.AssignStmt{Lhs: []ast.Expr{&ast.Ident{NamePos: pos, Name: c}}, TokPos: pos, Tok: token.ASSIGN,
			Rhs: []ast.Expr{&ast.BasicLit{ValuePos: pos, Kind: token.INT, Value: strconv.Itoa(code)}}}
	}
	var rewrite func(s ast.Stmt, loops, breaks int) ast.Stmt
	var rewriteList func(list []ast.Stmt, loops, breaks int) []ast.Stmt
	rewriteList = func(list []ast.Stmt, loops, breaks int) []ast.Stmt {
		out := make([]ast.Stmt, len(list))
		for k, s := range list {
			out[k] = rewrite(s, loops, breaks)
		}
		return out
	}
	rewrite = func(s ast.Stmt, loops, breaks int) ast.Stmt {
		switch x := s.(type) {
		case *ast.BranchStmt:
			pos = x.TokPos
			target := ""
			if x.Label != nil {
				target = x.Label.Name
			}
			switch {
			case x.Tok == token.GOTO && !inner[target]:
				l.fail(x.TokPos, fmt.Errorf("goto %s leaves the body of a range-over-function loop, which the kernel runs as a function: use break or a flag", target))
			case x.Tok == token.CONTINUE && ((target == "" && loops == 0) || (target != "" && target == label)):
				return ret(true)
			case x.Tok == token.BREAK && ((target == "" && breaks == 0) || (target != "" && target == label)):
				return ret(false)
			case (x.Tok == token.BREAK || x.Tok == token.CONTINUE) && target != "" && !inner[target]:
				code := len(*jumps) + 1
				*jumps = append(*jumps, jump{code: code, tok: x.Tok, label: target})
				return &ast.BlockStmt{Lbrace: pos, List: []ast.Stmt{set(code), ret(false)}, Rbrace: pos}
			}
			return s
		case *ast.ReturnStmt:
			pos = x.Return
			*returns = true
			var list []ast.Stmt
			if len(x.Results) > 0 {
				var lhs []ast.Expr
				for _, name := range retVars { // the enclosing function's named results, or temporaries
					lhs = append(lhs, &ast.Ident{NamePos: pos, Name: name})
				}
				list = append(list, &ast.AssignStmt{Lhs: lhs, TokPos: pos, Tok: token.ASSIGN, Rhs: x.Results})
			}
			list = append(list, set(-1), ret(false))
			return &ast.BlockStmt{Lbrace: pos, List: list, Rbrace: pos}
		case *ast.DeferStmt:
			l.fail(x.Defer, fmt.Errorf("defer in the body of a range-over-function loop would run at the end of each iteration here (the kernel runs the body as a function): move the loop or the defer into a function of its own"))
		case *ast.BlockStmt:
			x.List = rewriteList(x.List, loops, breaks)
		case *ast.LabeledStmt:
			x.Stmt = rewrite(x.Stmt, loops, breaks)
		case *ast.IfStmt:
			x.Body.List = rewriteList(x.Body.List, loops, breaks)
			if x.Else != nil {
				x.Else = rewrite(x.Else, loops, breaks)
			}
		case *ast.ForStmt:
			x.Body.List = rewriteList(x.Body.List, loops+1, breaks+1)
		case *ast.RangeStmt:
			x.Body.List = rewriteList(x.Body.List, loops+1, breaks+1)
		case *ast.SwitchStmt:
			for _, cc := range x.Body.List {
				cc.(*ast.CaseClause).Body = rewriteList(cc.(*ast.CaseClause).Body, loops, breaks+1)
			}
		case *ast.TypeSwitchStmt:
			for _, cc := range x.Body.List {
				cc.(*ast.CaseClause).Body = rewriteList(cc.(*ast.CaseClause).Body, loops, breaks+1)
			}
		case *ast.SelectStmt:
			for _, cc := range x.Body.List {
				cc.(*ast.CommClause).Body = rewriteList(cc.(*ast.CommClause).Body, loops, breaks+1)
			}
		}
		return s
	}
	body.List = rewriteList(body.List, 0, 0)
	return body
}

func (l *lowerer) fail(pos token.Pos, err error) {
	if l.err == nil {
		l.err = fmt.Errorf("%s: %w", l.fset.Position(pos), err)
	}
}

// lowerMinMax folds min and max calls with constant arguments and moves constant
// arguments after the others (see the comment at the top of the file), when min and
// max are still the prelude's.
func (i *Interp) lowerMinMax(root ast.Node) {
	i.mu.Lock()
	own := map[string]bool{"min": i.prelude["min"], "max": i.prelude["max"]}
	i.mu.Unlock()
	ast.Inspect(root, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || c.Ellipsis != token.NoPos || len(c.Args) == 0 {
			return true
		}
		id, ok := c.Fun.(*ast.Ident)
		if !ok || !own[id.Name] {
			return true
		}
		var consts, others []ast.Expr
		var vals []constant.Value
		for _, a := range c.Args {
			if v := constValue(a); v != nil {
				consts, vals = append(consts, a), append(vals, v)
			} else {
				others = append(others, a)
			}
		}
		if len(others) > 0 {
			c.Args = append(others, consts...)
			return true
		}
		best, bestArg := vals[0], c.Args[0]
		op := token.LSS
		if id.Name == "max" {
			op = token.GTR
		}
		for k, v := range vals[1:] {
			if v.Kind() != best.Kind() && (v.Kind() == constant.String || best.Kind() == constant.String) {
				return true // mismatched: let the call report it
			}
			if constant.Compare(v, op, best) {
				best, bestArg = v, c.Args[k+1]
			}
			if v.Kind() == constant.Float && best.Kind() == constant.Int {
				best = constant.ToFloat(best)
			}
		}
		// Replace the call by its value: a float when any argument was one.
		lit := constLit(best, bestArg.Pos())
		c.Fun = &ast.Ident{NamePos: c.Pos(), Name: "_gmlConst"}
		c.Args = []ast.Expr{lit}
		return true
	})
	// The folded calls become parenthesised literals.
	replaceCalls(root, "_gmlConst")
}

// constValue returns the value of a literal (possibly negated), or nil.
func constValue(e ast.Expr) constant.Value {
	switch x := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(x.Value, x.Kind, 0)
	case *ast.UnaryExpr:
		if v := constValue(x.X); v != nil && (x.Op == token.SUB || x.Op == token.ADD) && v.Kind() != constant.String {
			return constant.UnaryOp(x.Op, v, 0)
		}
	}
	return nil
}

// constLit returns a literal for v at pos: a float keeps a decimal point.
func constLit(v constant.Value, pos token.Pos) ast.Expr {
	var lit *ast.BasicLit
	switch v.Kind() {
	case constant.String:
		lit = &ast.BasicLit{ValuePos: pos, Kind: token.STRING, Value: v.ExactString()}
	case constant.Int:
		lit = &ast.BasicLit{ValuePos: pos, Kind: token.INT, Value: v.ExactString()}
	default:
		s := v.String()
		if f, ok := constant.Float64Val(v); ok {
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		lit = &ast.BasicLit{ValuePos: pos, Kind: token.FLOAT, Value: strings.TrimPrefix(s, "-")}
		if strings.HasPrefix(s, "-") {
			return &ast.ParenExpr{Lparen: pos, X: &ast.UnaryExpr{OpPos: pos, Op: token.SUB, X: lit}, Rparen: pos}
		}
	}
	if strings.HasPrefix(lit.Value, "-") {
		lit.Value = lit.Value[1:]
		return &ast.ParenExpr{Lparen: pos, X: &ast.UnaryExpr{OpPos: pos, Op: token.SUB, X: lit}, Rparen: pos}
	}
	return lit
}

// replaceCalls replaces every call of the function named name under root by its single
// argument.
func replaceCalls(root ast.Node, name string) {
	exprType := reflect.TypeOf((*ast.Expr)(nil)).Elem()
	unwrap := func(f reflect.Value) {
		if c, ok := f.Interface().(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == name {
				f.Set(reflect.ValueOf(c.Args[0]))
			}
		}
	}
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		v := reflect.ValueOf(n).Elem()
		for k := 0; k < v.NumField(); k++ {
			f := v.Field(k)
			if f.Type() == exprType && !f.IsNil() {
				unwrap(f)
			}
			if f.Kind() == reflect.Slice && f.Type().Elem() == exprType {
				for j := 0; j < f.Len(); j++ {
					unwrap(f.Index(j))
				}
			}
		}
		return true
	})
}

// compilePanicRE matches the lines yaegi's compiler logs (with the standard logger)
// before it panics, e.g. "2026/12/01 14:32:55 nil type".
var compilePanicRE = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d )?nil (reflect )?type\n$`)

// logFilter passes the standard logger's lines to out but those of compilePanicRE.
type logFilter struct{ out io.Writer }

func (f logFilter) Write(p []byte) (int, error) {
	if compilePanicRE.Match(p) {
		return len(p), nil
	}
	return f.out.Write(p)
}

// quietLog keeps yaegi's compiler panics out of the log (the cell's stderr) while a
// chunk compiles; the compile error reports them. It returns the function restoring
// the log's writer.
func quietLog() func() {
	out := log.Writer()
	log.SetOutput(logFilter{out})
	return func() { log.SetOutput(out) }
}

package exec

import (
	"fmt"
	"go/ast"
	"reflect"
	goruntime "runtime"
	"slices"
	"strings"

	"github.com/traefik/yaegi/interp"

	"github.com/gml-dev/gml/internal/gstack"
	"github.com/gml-dev/gml/internal/sysmem"
)

// Runaway recursion. Go's stack limit (1 GB; debug.SetMaxStack) ends the process with a
// fatal error that no recover catches, and in yaegi each interpreted call takes about
// 600 bytes of Go stack, so `func f(n int) int { return f(n+1) }` reaches it after some
// 1.7 million calls and about a second. A panic raised deep down is no way out either:
// yaegi recovers and re-panics in every interpreted frame, which costs time quadratic in
// the depth (measured: 0.5 s at 1,000 frames, 47 s at 8,000). So the rewriter puts
// `_gmlcell.Enter(k)` at the top of each cell function that can call itself (directly,
// through other cell functions, or through a variable holding a function literal), and
// Enter compares the goroutine's stack with recursionLimit (a few nanoseconds, see
// internal/gstack). Past it, Enter records the cell's error, with the function's name
// and the number of interpreted calls on the stack, cancels the cell and ends the
// goroutine with runtime.Goexit, which unwinds in linear time (0.3 s for 220,000
// calls). The guard costs about a third more CPU time on a call of a function that does
// nothing else (fib: 52 ms without, 74 ms with), and only functions in a cycle of the
// call graph pay it. Methods named String, Error,
// GoString, Format and MIMEBundle are always guarded: compiled code (fmt) calls them, so
// their recursion runs through edges the call graph cannot see.

// recursionLimit is the stack a goroutine running cell code may use: about 220,000
// nested interpreted calls, an eighth of Go's limit, so the check comes well before the
// runtime's fatal error (the stack doubles as it grows: the next size, 256 MiB, is
// still allowed).
const recursionLimit = 128 << 20

// nameStack is the error name of runaway recursion.
const nameStack = "StackOverflow"

// alwaysGuarded lists method names compiled code calls (fmt, display), so that a method
// that prints its own receiver recurses through compiled frames.
var alwaysGuarded = map[string]bool{"String": true, "Error": true, "GoString": true, "Format": true, "MIMEBundle": true}

// guardRecursion records the functions that n (a declaration or statement chunk)
// defines in the call graph of cell functions and puts the recursion guard at the top
// of those that can reach themselves.
func (i *Interp) guardRecursion(n ast.Node) {
	type def struct {
		node string // graph node: "f", ".m" for every method m, or a variable's name
		name string // for messages: "f", "T.m", "(*T).m"
		body *ast.BlockStmt
	}
	var defs []def
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Body == nil {
				return false
			}
			if x.Recv == nil {
				defs = append(defs, def{x.Name.Name, x.Name.Name, x.Body})
			} else {
				defs = append(defs, def{"." + x.Name.Name, recvName(x.Recv) + "." + x.Name.Name, x.Body})
			}
		case *ast.AssignStmt:
			for k, rhs := range x.Rhs {
				if lit, ok := rhs.(*ast.FuncLit); ok && k < len(x.Lhs) {
					if id, ok := x.Lhs[k].(*ast.Ident); ok && id.Name != "_" {
						defs = append(defs, def{id.Name, id.Name, lit.Body})
					}
				}
			}
		case *ast.ValueSpec:
			for k, v := range x.Values {
				if lit, ok := v.(*ast.FuncLit); ok && k < len(x.Names) && x.Names[k].Name != "_" {
					defs = append(defs, def{x.Names[k].Name, x.Names[k].Name, lit.Body})
				}
			}
		}
		return true
	})
	if len(defs) == 0 {
		return
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, d := range defs {
		i.calls[d.node] = i.mentions(d.body)
	}
	for _, d := range defs {
		if !alwaysGuarded[strings.TrimPrefix(d.node, ".")] && !i.reaches(d.node, d.node) {
			continue
		}
		// Each guarded function gets an Enter of its own, without arguments: an argument
		// would make yaegi's call of it half again as costly. A function compiled again
		// (redefined, or recompiled for a redefinition) keeps its Enter.
		k := slices.Index(i.guardNames, d.name)
		if k < 0 {
			k = len(i.guardNames)
			if err := i.yi.Use(interp.Exports{cellPkgPath + "/cell": {fmt.Sprintf("Enter%d", k): reflect.ValueOf(func() { i.enter(k) })}}); err != nil {
				continue
			}
			i.guardNames = append(i.guardNames, d.name)
		}
		fn := fmt.Sprintf("Enter%d", k)
		enter := &ast.ExprStmt{X: &ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent(cellPkg), Sel: ast.NewIdent(fn)}}}
		setPos(enter, d.body.Lbrace)
		d.body.List = append([]ast.Stmt{enter}, d.body.List...)
	}
}

// mentions returns the names body refers to that may be functions of cells: every
// identifier, and ".m" for every selector m whose operand is not an imported package.
// Called with i.mu held.
func (i *Interp) mentions(body *ast.BlockStmt) map[string]bool {
	m := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if _, isPkg := i.imports[id.Name]; isPkg {
					return false
				}
			}
			m["."+x.Sel.Name] = true
			ast.Inspect(x.X, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					m[id.Name] = true
				}
				return true
			})
			return false
		case *ast.Ident:
			m[x.Name] = true
		}
		return true
	})
	return m
}

// reaches reports whether the call graph has a path of one or more edges from node
// from to node to. Called with i.mu held.
func (i *Interp) reaches(from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for next := range i.calls[n] {
			if next == to {
				return true
			}
			if _, isDef := i.calls[next]; isDef && !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return false
}

// recvName renders a method's receiver type as in Go's method expressions: T or (*T).
func recvName(recv *ast.FieldList) string {
	t := recvType(recv)
	if len(recv.List) > 0 {
		if _, ptr := recv.List[0].Type.(*ast.StarExpr); ptr {
			return "(*" + t + ")"
		}
	}
	return t
}

// enter is the recursion guard of function k (_gmlcell.Enter<k>): it returns at once
// unless the calling goroutine's stack has grown past recursionLimit.
func (i *Interp) enter(k int) {
	if gstack.Used() < recursionLimit {
		return
	}
	i.overflow(k)
}

// overflow fails the running cell (or, between cells, reports on the next one) with the
// runaway recursion of guarded function k, and ends the calling goroutine.
func (i *Interp) overflow(k int) {
	depth := interpretedDepth()
	i.mu.Lock()
	name := i.guardNames[k]
	c := i.cell
	i.mu.Unlock()
	msg := fmt.Sprintf("runaway recursion in %s: %d nested calls of interpreted functions used %s of stack, the limit for cell code",
		name, depth, sysmem.FormatBytes(recursionLimit))
	e := &Error{Name: nameStack, Value: msg, Traceback: []string{nameStack + ": " + msg,
		"The goroutine was stopped before Go's own stack limit, which would have ended the kernel; the state of earlier cells is intact."}}
	i.mu.Lock()
	if c != nil {
		if c.stackErr == nil {
			c.stackErr = e
		}
	} else {
		e.Value = "in a goroutine, after its cell had finished: " + e.Value
		e.Traceback[0] = nameStack + ": " + e.Value
		i.late = append(i.late, e)
	}
	i.mu.Unlock()
	if c != nil {
		c.cancel()
	}
	goruntime.Goexit()
}

// interpretedDepth counts the interpreted calls on the calling goroutine's stack: one
// yaegi runCfg frame each.
func interpretedDepth() int {
	pcs := make([]uintptr, 1<<16)
	n := goruntime.Callers(0, pcs)
	for n == len(pcs) {
		pcs = make([]uintptr, 2*len(pcs))
		n = goruntime.Callers(0, pcs)
	}
	depth := 0
	frames := goruntime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == "github.com/traefik/yaegi/interp.runCfg" {
			depth++
		}
		if !more {
			return depth
		}
	}
}

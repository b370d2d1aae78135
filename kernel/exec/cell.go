package exec

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// itemKind says how a top-level item of a cell is fed to the interpreter.
type itemKind int

const (
	itemImport  itemKind = iota
	itemDecl             // func, method, type, var or const declaration
	itemStmt             // any statement or expression
	itemPackage          // a package clause, as in a pasted file: ignored
)

// item is one top-level import, declaration or statement of a cell, by byte offsets.
type item struct {
	kind       itemKind
	start, end int
	line, col  int // 1-based position of start in the cell
}

// chunk is a run of items of one kind, compiled and run as one unit.
type chunk struct {
	kind  itemKind
	items []item
}

// splitCell cuts a cell into top-level items at semicolons (written or implied by a
// newline) outside brackets, and groups them into chunks: all imports first, then runs
// of declarations and of statements in cell order. Evaluating in order keeps
// `x := 3` before a `func` that uses x, and a `var y = x` after it. A declaration for
// which stmtVar (when not nil) returns true is taken as a statement.
func splitCell(code string, stmtVar func(src string) bool) ([]chunk, error) {
	if err := checkBrackets(code); err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var s scanner.Scanner
	s.Init(file, []byte(code), nil, 0) // errors are reported later by the parser
	var items []item
	var toks []token.Token
	depth, start, end := 0, -1, 0
	// header is set in the header of a for, if or switch statement, up to its body: its
	// semicolons do not end the statement. (Cut there, `for i := 0; ; i++ {` would lose
	// its empty condition when the items are joined by newlines.)
	header := false
	flush := func() {
		if start >= 0 {
			p := file.Position(file.Pos(start))
			items = append(items, item{kind: classify(toks), start: start, end: end, line: p.Line, col: p.Column})
		}
		start, toks, header = -1, toks[:0], false
	}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		off := file.Offset(pos)
		if tok == token.SEMICOLON && depth == 0 && !header {
			flush()
			continue
		}
		if start < 0 && (tok == token.FOR || tok == token.IF || tok == token.SWITCH) {
			header = true
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			if tok == token.LBRACE && depth == 0 {
				header = false // the body (or a composite literal: then as before)
			}
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		}
		if start < 0 {
			start = off
		}
		toks = append(toks, tok)
		if lit == "" || tok == token.SEMICOLON {
			lit = tok.String()
		}
		end = off + len(lit)
	}
	flush()
	var imports []item
	var chunks []chunk
	for _, it := range items {
		if it.kind == itemDecl && stmtVar != nil && stmtVar(code[it.start:it.end]) {
			it.kind = itemStmt
		}
		switch {
		case it.kind == itemPackage:
			continue
		case it.kind == itemImport:
			imports = append(imports, it)
		case len(chunks) > 0 && chunks[len(chunks)-1].kind == it.kind:
			chunks[len(chunks)-1].items = append(chunks[len(chunks)-1].items, it)
		default:
			chunks = append(chunks, chunk{kind: it.kind, items: []item{it}})
		}
	}
	if len(imports) > 0 {
		chunks = append([]chunk{{kind: itemImport, items: imports}}, chunks...)
	}
	return chunks, nil
}

// classify tells a declaration from a statement by its first tokens. `func` starts a
// declaration when a name follows, or a receiver and then a name; otherwise it starts a
// function literal, which is a statement.
func classify(toks []token.Token) itemKind {
	switch toks[0] {
	case token.PACKAGE:
		return itemPackage
	case token.IMPORT:
		return itemImport
	case token.TYPE, token.VAR, token.CONST:
		return itemDecl
	case token.FUNC:
		if len(toks) > 1 && toks[1] == token.IDENT {
			return itemDecl
		}
		if len(toks) > 1 && toks[1] == token.LPAREN {
			depth := 0
			for i := 1; i < len(toks); i++ {
				switch toks[i] {
				case token.LPAREN:
					depth++
				case token.RPAREN:
					depth--
				}
				if depth == 0 {
					if i+1 < len(toks) && toks[i+1] == token.IDENT {
						return itemDecl
					}
					break
				}
			}
		}
	}
	return itemStmt
}

// bracketError is an unclosed or unmatched bracket, at a 1-based cell position.
type bracketError struct {
	line, col int
	msg       string
}

func (e *bracketError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

// checkBrackets reports the first unmatched closing bracket or the innermost unclosed
// opening one, so a cell with a missing brace gets an error at the brace rather than at
// the end of the interpreter's wrapper. IsComplete uses it too.
func checkBrackets(code string) error {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var s scanner.Scanner
	var scanErr error
	s.Init(file, []byte(code), func(pos token.Position, msg string) {
		if scanErr == nil {
			scanErr = &bracketError{pos.Line, pos.Column, msg}
		}
	}, 0)
	type open struct {
		tok token.Token
		pos token.Position
	}
	closer := map[token.Token]token.Token{token.RPAREN: token.LPAREN, token.RBRACK: token.LBRACK, token.RBRACE: token.LBRACE}
	var stack []open
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			break
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			stack = append(stack, open{tok, file.Position(pos)})
		case token.RPAREN, token.RBRACK, token.RBRACE:
			p := file.Position(pos)
			if len(stack) == 0 || stack[len(stack)-1].tok != closer[tok] {
				return &bracketError{p.Line, p.Column, fmt.Sprintf("unexpected %s", tok)}
			}
			stack = stack[:len(stack)-1]
		}
	}
	if scanErr != nil {
		return scanErr
	}
	if len(stack) > 0 {
		o := stack[len(stack)-1]
		return &bracketError{o.pos.Line, o.pos.Column, fmt.Sprintf("unclosed %s", o.tok)}
	}
	return nil
}

// srcBase is the base name of every file given to the interpreter. yaegi keys imports
// by package name and the base name of the file (of the node's position, after line
// directives), so all cells must share it for an import in one cell to serve the next.
// It is yaegi's default source name, which the pre-imports in New use.
const srcBase = "_.go"

// source returns the Go file text of a chunk. Every item is preceded by a
// /*line cell[N]/_.go:L:C*/ directive, so positions in parse errors, compile errors and
// panics read as cell lines and columns whatever wrapper surrounds the item (cleanPos
// drops the "/_.go" from messages).
func (c chunk) source(code, name string) string {
	var b strings.Builder
	b.WriteString("package main\n")
	if c.kind == itemStmt {
		b.WriteString("func main() {\n")
	}
	for _, it := range c.items {
		fmt.Fprintf(&b, "/*line %s/%s:%d:%d*/%s\n", name, srcBase, it.line, it.col, code[it.start:it.end])
	}
	if c.kind == itemStmt {
		b.WriteString("}\n")
	}
	return b.String()
}

// parse parses the chunk into fset (the interpreter's) and returns the file and, for a
// statement chunk, the body of its wrapper function.
func (c chunk) parse(fset *token.FileSet, code, name string) (*ast.File, *ast.BlockStmt, error) {
	f, err := parser.ParseFile(fset, srcBase, c.source(code, name), parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	if c.kind != itemStmt {
		return f, nil, nil
	}
	return f, f.Decls[0].(*ast.FuncDecl).Body, nil
}

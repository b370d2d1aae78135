package exec

import (
	"fmt"
	"go/scanner"
	"go/token"
	"strings"
)

// autoImport imports the packages a cell uses without importing them, as goimports
// would: `fmt.Println(...)` in a fresh kernel just works. A name X qualifies when the
// cell uses it as X.Sel, no import, global or cell declaration already has that name,
// the cell does not itself declare X, and an importable package has X as its last path
// element (the shortest path wins: rand is math/rand). An explicit import always wins,
// since it is compiled first in the cell and then X is taken.
func (i *Interp) autoImport(code string) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(code)), []byte(code), nil, 0)
	heads := map[string]bool{}
	declared := map[string]bool{}
	var prev, prev2 token.Token
	var prevLit string
	inImport, grouped := false, false
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		// The cell's own imports take their names: import "math/rand/v2" binds rand.
		switch {
		case tok == token.IMPORT:
			inImport, grouped = true, false
		case inImport && tok == token.LPAREN && prev == token.IMPORT:
			grouped = true
		case inImport && tok == token.STRING:
			declared[packageName(strings.Trim(lit, "`\""))] = true
		case inImport && ((grouped && tok == token.RPAREN) || (!grouped && tok == token.SEMICOLON)):
			inImport = false
		}
		switch {
		case tok == token.PERIOD && prev == token.IDENT && prev2 != token.PERIOD:
			heads[prevLit] = true
		case (tok == token.DEFINE || tok == token.ASSIGN) && prev == token.IDENT:
			declared[prevLit] = true
		case tok == token.IDENT && (prev == token.VAR || prev == token.CONST || prev == token.FUNC || prev == token.TYPE || prev == token.IMPORT):
			declared[lit] = true
		}
		prev2, prev, prevLit = prev, tok, lit
	}
	if len(heads) == 0 {
		return
	}
	globals := i.yi.Globals()
	importable := i.importable()
	for name := range heads {
		i.mu.Lock()
		_, imported := i.imports[name]
		_, decl := i.decls[name]
		i.mu.Unlock()
		if _, global := globals[name]; imported || decl || global || declared[name] {
			continue
		}
		path, ok := importable[name]
		if !ok {
			continue
		}
		if _, isStd := stdMembers(path); isStd {
			if err := i.loadStd(path); err != nil {
				continue
			}
		} else if _, err := i.yi.Eval(fmt.Sprintf("import %q", path)); err != nil {
			continue // the cell then reports "undefined: name" itself
		}
		i.mu.Lock()
		i.imports[name] = path
		i.mu.Unlock()
	}
}

// packageName returns the name an import path binds by default: its last element, or
// the one before a major-version suffix (math/rand/v2 binds rand).
func packageName(path string) string {
	parts := strings.Split(path, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return parts[len(parts)-2]
	}
	return last
}

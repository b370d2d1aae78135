package exec

import (
	"go/scanner"
	"go/token"
	"strings"
)

// IsComplete says whether code is ready to run: "complete"; "incomplete" with the
// indent of the next line when more input can finish it (an open bracket, an open raw
// string, a trailing operator); "invalid" for a syntax error more input cannot fix.
func IsComplete(code string) (status, indent string) {
	if strings.TrimSpace(code) == "" {
		return "complete", ""
	}
	last := code[strings.LastIndex(strings.TrimRight(code, "\n"), "\n")+1:]
	lead := last[:len(last)-len(strings.TrimLeft(last, " \t"))]
	if err := checkBrackets(code); err != nil {
		be := err.(*bracketError)
		switch {
		case strings.HasPrefix(be.msg, "unclosed"):
			return "incomplete", lead + "    "
		case strings.Contains(be.msg, "raw string literal not terminated"),
			strings.Contains(be.msg, "comment not terminated"):
			return "incomplete", ""
		default:
			return "invalid", ""
		}
	}
	if continues(code) {
		return "incomplete", lead + "    "
	}
	chunks, err := splitCell(code, nil)
	if err != nil {
		return "invalid", ""
	}
	for _, ch := range chunks {
		if _, _, err := ch.parse(token.NewFileSet(), code, "cell"); err != nil {
			return "invalid", ""
		}
	}
	return "complete", ""
}

// continues reports whether the last token of code asks for more: a binary operator,
// a comma, a dot, or an assignment.
func continues(code string) bool {
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(code))
	var s scanner.Scanner
	s.Init(file, []byte(code), nil, 0)
	lastTok := token.ILLEGAL
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue
		}
		lastTok = tok
	}
	switch lastTok {
	case token.COMMA, token.PERIOD, token.ASSIGN, token.DEFINE, token.ARROW, token.LAND, token.LOR:
		return true
	}
	return lastTok.IsOperator() && lastTok.Precedence() > 0
}

package exec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// explain rewrites compile errors that yaegi words obscurely, or that come from its
// known limits, into messages that say what went wrong in the cell and what to write
// instead. err's first line starts with the cell position when yaegi knows it. Errors it
// does not recognise are returned unchanged.
func explain(err error, cell int, code string) error {
	msg := cleanPos(err.Error())
	line, col, ok := cellPos(msg, cell)
	src := ""
	if ok {
		if lines := strings.Split(code, "\n"); line <= len(lines) && col-1 <= len(lines[line-1]) {
			src = lines[line-1][col-1:]
		}
	}
	prefix := ""
	if ok {
		prefix = fmt.Sprintf("cell[%d]:%d:%d: ", cell, line, col)
	}
	switch {
	case ok && optionMismatch.MatchString(msg):
		// nn's options are typed by the call that takes them (nn.LayerOption,
		// nn.FitOption, ...): the option was passed to another call.
		m := optionMismatch.FindStringSubmatch(msg)
		name := src[:strings.IndexFunc(src+"(", func(r rune) bool { return r == '(' || r == ',' || r == ')' })]
		return fmt.Errorf("%s%s is a %s, but this argument must be a %s: the option belongs to another call "+
			"(nn.LayerOption goes to layer constructors, nn.CompileOption to Compile, nn.FitOption to Fit, "+
			"nn.EvaluateOption to Evaluate, nn.PredictOption to Predict, nn.CallbackOption to callbacks)", prefix, name, m[1], m[2])
	case inferenceFailed(err) && ok:
		name := strings.TrimRight(src[:strings.IndexFunc(src+"(", func(r rune) bool { return r == '(' || r == '[' || r == ' ' })], ".")
		if name == "" {
			name = "the generic function"
		}
		return fmt.Errorf("%s%s\n(the interpreter infers type arguments less well than Go, above all from function literals, untyped constants and constraints like ~[]E: give them, as in %s[int, string](...))", prefix, strings.TrimPrefix(msg, prefix), name)
	case (strings.HasPrefix(src, "Must(") || strings.HasPrefix(src, "Must2(")) &&
		(strings.Contains(msg, "CFG post-order panic") || strings.Contains(msg, "nil reflect type")):
		return errors.New(prefix + "Must(f()) works as the first call of a statement (x := Must(f()), return Must(f()), ...), not after another call, on the right of && or ||, or in a loop condition: write v := Must(f()) on a line of its own and use v")
	}
	return err
}

// optionMismatch matches yaegi's error for an nn option given to a call of another kind.
var optionMismatch = regexp.MustCompile(`cannot use type (nn\.\w+) as type (nn\.\w+Option)$`)

// cellPos returns the line and column at the start of msg when it is a position in the
// cell.
func cellPos(msg string, cell int) (line, col int, ok bool) {
	sub := posRE.FindStringSubmatch(msg)
	if sub == nil {
		return 0, 0, false
	}
	if c, _ := strconv.Atoi(sub[1]); c != cell {
		return 0, 0, false
	}
	line, _ = strconv.Atoi(sub[2])
	col, _ = strconv.Atoi(sub[3])
	return line, col, line > 0 && col > 0
}

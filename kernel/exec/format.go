package exec

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Limits of the text form of a value.
const (
	maxElems = 20  // elements shown of a slice, array or map
	maxDepth = 4   // nesting shown before "..."
	maxWidth = 100 // a longer composite value is broken over lines
)

// formatValue returns the text/plain form of a cell's value: fmt's %v for values with a
// String or Error method, Go-literal-like text for composites (type, field names,
// quoted strings, sorted map keys), long composites broken over lines, and long slices
// and maps cut after maxElems elements. names gives the names of cell-defined struct
// types, which reflection sees as unnamed; it may be nil.
// A String or Error method that panics gives "<T: ...panicked...>" instead.
func formatValue(v any, names map[reflect.Type]string) (s string) {
	if v == nil {
		return "<nil>"
	}
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("<%T: formatting panicked: %v>", v, r)
		}
	}()
	return formatter{names}.format(reflect.ValueOf(v), 0, true)
}

// formatter carries the names of cell-defined types through a formatting.
type formatter struct {
	names map[reflect.Type]string
}

func (f formatter) format(v reflect.Value, depth int, top bool) string {
	if !v.IsValid() {
		return "<nil>"
	}
	if v.CanInterface() {
		switch x := v.Interface().(type) {
		case error:
			if v.Kind() == reflect.Pointer && v.IsNil() {
				return "<nil>"
			}
			if top {
				return "error: " + x.Error()
			}
			return strconv.Quote(x.Error())
		case fmt.Stringer:
			if v.Kind() == reflect.Pointer && v.IsNil() {
				return "<nil>"
			}
			return x.String()
		}
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Interface:
		return f.format(v.Elem(), depth, top)
	case reflect.Pointer:
		if v.IsNil() {
			return "<nil>"
		}
		if e := v.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Slice || e.Kind() == reflect.Array || e.Kind() == reflect.Map {
			return "&" + f.format(e, depth, false)
		}
		return fmt.Sprintf("(%s)(%#x)", v.Type(), v.Pointer())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return fmt.Sprintf("%s(nil)", v.Type())
		}
		return v.Type().String()
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return v.Type().String() + "(nil)"
		}
		var elems []string
		if depth < maxDepth {
			for i := 0; i < v.Len() && i < maxElems; i++ {
				elems = append(elems, f.format(v.Index(i), depth+1, false))
			}
		}
		return composite(f.typeName(v.Type()), elems, v.Len())
	case reflect.Map:
		if v.IsNil() {
			return v.Type().String() + "(nil)"
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		var elems []string
		if depth < maxDepth {
			for i, k := range keys {
				if i == maxElems {
					break
				}
				elems = append(elems, f.format(k, depth+1, false)+": "+f.format(v.MapIndex(k), depth+1, false))
			}
		}
		return composite(f.typeName(v.Type()), elems, v.Len())
	case reflect.Struct:
		var elems []string
		if depth < maxDepth {
			t := v.Type()
			for i := 0; i < v.NumField(); i++ {
				elems = append(elems, t.Field(i).Name+": "+f.format(v.Field(i), depth+1, false))
			}
		}
		return composite(f.typeName(v.Type()), elems, v.NumField())
	default:
		return fmt.Sprint(v)
	}
}

// typeName names a type: a cell-defined struct type by its name in the cell (also
// inside slice, array, pointer and map types), another unnamed struct type "struct".
func (f formatter) typeName(t reflect.Type) string {
	if n, ok := f.names[t]; ok {
		return n
	}
	if t.Name() != "" {
		return t.String()
	}
	switch t.Kind() {
	case reflect.Struct:
		return "struct"
	case reflect.Slice:
		return "[]" + f.typeName(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), f.typeName(t.Elem()))
	case reflect.Pointer:
		return "*" + f.typeName(t.Elem())
	case reflect.Map:
		return "map[" + f.typeName(t.Key()) + "]" + f.typeName(t.Elem())
	}
	return t.String()
}

// composite writes T{a, b, c}, on one line when short, one element per line otherwise,
// with "... (N more)" when elements were cut.
func composite(typ string, elems []string, n int) string {
	if n > 0 && len(elems) == 0 {
		return typ + "{...}"
	}
	if n > len(elems) {
		elems = append(elems, fmt.Sprintf("... (%d more)", n-len(elems)))
	}
	one := typ + "{" + strings.Join(elems, ", ") + "}"
	if len(one) <= maxWidth && !strings.Contains(one, "\n") {
		return one
	}
	const ind = "    " // nested values indent relative to their parent
	var b strings.Builder
	b.WriteString(typ + "{\n")
	for _, e := range elems {
		b.WriteString(ind + strings.ReplaceAll(e, "\n", "\n"+ind) + ",\n")
	}
	b.WriteString("}")
	return b.String()
}

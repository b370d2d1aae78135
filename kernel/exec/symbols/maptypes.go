package symbols

import (
	"fmt"
	"reflect"

	"github.com/gml-dev/gml/display"
)

// MapTypes tells yaegi which interfaces to keep on values of cell-defined types passed
// to these functions' `any` parameters, so that a cell type with a MIMEBundle (or
// String, or Error) method renders through display.Show like a compiled one. It is
// loaded with Use under the key ".".
var MapTypes = map[reflect.Value][]reflect.Type{}

func init() {
	rich := []reflect.Type{
		reflect.TypeOf((*display.Renderer)(nil)).Elem(),
		reflect.TypeOf((*error)(nil)).Elem(),
		reflect.TypeOf((*fmt.Stringer)(nil)).Elem(),
	}
	for _, f := range []any{display.Show, display.NewDisplay, display.BundleOf} {
		MapTypes[reflect.ValueOf(f)] = rich
	}
	Symbols["."] = map[string]reflect.Value{"MapTypes": reflect.ValueOf(MapTypes)}
}

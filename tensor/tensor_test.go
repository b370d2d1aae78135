package tensor

import (
	"errors"
	"strings"
	"testing"

	"github.com/gml-dev/gml/internal/sysmem"
)

func TestNewTooLargeIsAnError(t *testing.T) {
	for _, shape := range []Shape{{1 << 38}, {1 << 20, 1 << 20}, {1 << 40, 1 << 40, 1 << 40}} {
		func() {
			defer func() {
				err, _ := recover().(error)
				var tl *sysmem.TooLargeError
				if !errors.As(err, &tl) || !strings.Contains(err.Error(), "tensor.New(f32") || !strings.Contains(err.Error(), "available") {
					t.Errorf("New(F32, %v): recovered %v, want a TooLargeError naming the tensor", shape, err)
				}
			}()
			New(F32, shape...)
		}()
	}
	if x := New(F32, 4, 4); x.Shape().Size() != 16 {
		t.Errorf("a small tensor has %d elements", x.Shape().Size())
	}
}

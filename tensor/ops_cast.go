package tensor

import "fmt"

// Cast converts between dtypes.

func init() { registerShape(OpCast, castRule) }

func castRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(CastAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be CastAttr, got %T", attr)
	}
	if !at.To.Valid() {
		return 0, nil, nil, fmt.Errorf("invalid target dtype %v", at.To)
	}
	// Quantised types decode to and encode from floating point only.
	from := in[0].dtype
	if from.IsQuantized() && !at.To.IsFloat() || at.To.IsQuantized() && !from.IsFloat() {
		return 0, nil, nil, fmt.Errorf("casts %v to %v: quantised types convert to and from floating-point types only", from, at.To)
	}
	if err := at.To.CheckShape(in[0].shape); err != nil {
		return 0, nil, nil, err
	}
	return at.To, in[0].shape, at, nil
}

// Cast converts x to dtype dt (floats to integers truncate toward zero; to Bool, nonzero
// is true).
func Cast(x *Node, dt DType) *Node { return Apply(OpCast, CastAttr{To: dt}, x) }

package tensor

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"gonum.org/v1/gonum/mat"

	"github.com/gml-dev/gml/internal/sysmem"
	"github.com/gml-dev/gml/tensor/quant"
)

// Tensor is a dense, contiguous, row-major array in host memory. It is what goes into a
// graph (inputs, constants, initial variable values) and what comes out of one. Its
// storage is raw bytes, 8-byte aligned, so it can be viewed as the typed slice of its
// dtype without copying and uploaded to a device as it is.
type Tensor struct {
	dtype DType
	shape Shape
	data  []byte
}

// New returns a zero-filled tensor. It panics with a *sysmem.TooLargeError, naming the
// size and the memory available, when the tensor cannot fit in memory.
func New(dt DType, shape ...int) *Tensor {
	s := Shape(shape).Clone()
	if err := s.Validate(); err != nil {
		panic(err)
	}
	if !dt.Valid() {
		panic(fmt.Errorf("tensor: New: invalid dtype %v", dt))
	}
	if err := dt.CheckShape(s); err != nil {
		panic(err)
	}
	// The element count can overflow an int for absurd shapes; the size is checked
	// before anything is allocated: the Go runtime would end the process, not panic, on
	// a size that cannot fit.
	elems := uint64(1)
	for _, d := range s {
		hi, lo := bits.Mul64(elems, uint64(d))
		if elems = lo; hi != 0 || elems > math.MaxInt64/8 {
			elems = math.MaxInt64 / 8
		}
	}
	bytes := uint64(dt.Bytes(int(elems)))
	if err := sysmem.CheckAlloc(bytes, func() string { return fmt.Sprintf("tensor.New(%v%v)", dt, s) }); err != nil {
		panic(err)
	}
	return &Tensor{dtype: dt, shape: s, data: alignedBytes(int(bytes))}
}

// alignedBytes allocates n bytes whose start is 8-byte aligned, so that views as
// []float32, []int64, ... are valid.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// FromBytes wraps raw little-endian element data. It copies data, so the caller may
// reuse it. The length must match the shape and dtype.
func FromBytes(dt DType, shape Shape, data []byte) (*Tensor, error) {
	if err := shape.Validate(); err != nil {
		return nil, err
	}
	if !dt.Valid() {
		return nil, fmt.Errorf("tensor: FromBytes: invalid dtype %v", dt)
	}
	if err := dt.CheckShape(shape); err != nil {
		return nil, err
	}
	want := dt.Bytes(shape.Size())
	if len(data) != want {
		return nil, fmt.Errorf("tensor: FromBytes: %d bytes for %v %v, want %d", len(data), dt, shape, want)
	}
	t := New(dt, shape...)
	copy(t.data, data)
	return t, nil
}

// FromFloat32s builds an F32 tensor of the given shape from data (copied).
func FromFloat32s(shape Shape, data []float32) (*Tensor, error) {
	if shape.Size() != len(data) {
		return nil, fmt.Errorf("tensor: FromFloat32s: %d values for shape %v (%d elements)", len(data), shape, shape.Size())
	}
	t := New(F32, shape...)
	copy(t.Float32s(), data)
	return t, nil
}

// FromFloat64s builds an F32 tensor of the given shape from float64 data, rounding each
// value to float32. Use FromFloat64sAs for another dtype.
func FromFloat64s(shape Shape, data []float64) (*Tensor, error) {
	return FromFloat64sAs(F32, shape, data)
}

// FromFloat64sAs builds a tensor of dtype dt from float64 data, converting each value.
func FromFloat64sAs(dt DType, shape Shape, data []float64) (*Tensor, error) {
	if shape.Size() != len(data) {
		return nil, fmt.Errorf("tensor: FromFloat64s: %d values for shape %v (%d elements)", len(data), shape, shape.Size())
	}
	t := New(dt, shape...)
	for i, v := range data {
		t.SetFloat(i, v)
	}
	return t, nil
}

// FromInts builds an I64 tensor (token ids, class labels) from ints.
func FromInts(shape Shape, data []int) (*Tensor, error) {
	if shape.Size() != len(data) {
		return nil, fmt.Errorf("tensor: FromInts: %d values for shape %v (%d elements)", len(data), shape, shape.Size())
	}
	t := New(I64, shape...)
	d := t.Int64s()
	for i, v := range data {
		d[i] = int64(v)
	}
	return t, nil
}

// FromRows builds a 2-D F32 tensor from a slice of equally long rows.
func FromRows(rows [][]float64) (*Tensor, error) {
	if len(rows) == 0 {
		return New(F32, 0, 0), nil
	}
	cols := len(rows[0])
	t := New(F32, len(rows), cols)
	d := t.Float32s()
	for i, r := range rows {
		if len(r) != cols {
			return nil, fmt.Errorf("tensor: FromRows: row %d has %d values, row 0 has %d", i, len(r), cols)
		}
		for j, v := range r {
			d[i*cols+j] = float32(v)
		}
	}
	return t, nil
}

// FromDense builds a 2-D F32 tensor from a gonum matrix.
func FromDense(m mat.Matrix) *Tensor {
	r, c := m.Dims()
	t := New(F32, r, c)
	d := t.Float32s()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d[i*c+j] = float32(m.At(i, j))
		}
	}
	return t
}

// Scalar returns a rank-0 tensor holding v converted to dt.
func Scalar(dt DType, v float64) *Tensor {
	t := New(dt)
	t.SetFloat(0, v)
	return t
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the shape. The caller must not modify it.
func (t *Tensor) Shape() Shape { return t.shape }

// Len is the number of elements.
func (t *Tensor) Len() int { return t.shape.Size() }

// Bytes returns the raw little-endian storage, shared with t.
func (t *Tensor) Bytes() []byte { return t.data }

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	c := New(t.dtype, t.shape...)
	copy(c.data, t.data)
	return c
}

// Reshape returns a tensor sharing t's storage with a new shape of the same size.
// One dimension may be -1 and is then inferred.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	s, err := ResolveReshape(t.shape, shape)
	if err != nil {
		return nil, err
	}
	if err := t.dtype.CheckShape(s); err != nil {
		return nil, err
	}
	return &Tensor{dtype: t.dtype, shape: s, data: t.data}, nil
}

// ResolveReshape returns the shape that replaces from, where want may hold one -1.
func ResolveReshape(from Shape, want []int) (Shape, error) {
	out := Shape(want).Clone()
	infer := -1
	known := 1
	for i, d := range out {
		switch {
		case d == -1 && infer >= 0:
			return nil, fmt.Errorf("tensor: reshape %v to %v: more than one -1", from, Shape(want))
		case d == -1:
			infer = i
		case d < 0:
			return nil, fmt.Errorf("tensor: reshape %v to %v: negative dimension", from, Shape(want))
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || from.Size()%known != 0 {
			return nil, fmt.Errorf("tensor: reshape %v to %v: %d elements do not divide into the known dimensions", from, Shape(want), from.Size())
		}
		out[infer] = from.Size() / known
	}
	if out.Size() != from.Size() {
		return nil, fmt.Errorf("tensor: reshape %v (%d elements) to %v (%d elements)", from, from.Size(), out, out.Size())
	}
	return out, nil
}

func (t *Tensor) view(dt DType, op string) {
	if t.dtype != dt {
		panic(fmt.Errorf("tensor: %s on a %v tensor", op, t.dtype))
	}
}

// Float32s returns the F32 storage as a slice shared with t. It panics for other dtypes.
func (t *Tensor) Float32s() []float32 {
	t.view(F32, "Float32s")
	if len(t.data) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&t.data[0])), len(t.data)/4)
}

// Int32s returns the I32 storage as a slice shared with t. It panics for other dtypes.
func (t *Tensor) Int32s() []int32 {
	t.view(I32, "Int32s")
	if len(t.data) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&t.data[0])), len(t.data)/4)
}

// Int64s returns the I64 storage as a slice shared with t. It panics for other dtypes.
func (t *Tensor) Int64s() []int64 {
	t.view(I64, "Int64s")
	if len(t.data) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&t.data[0])), len(t.data)/8)
}

// Uint16s returns F16 or BF16 storage as raw 16-bit patterns shared with t.
func (t *Tensor) Uint16s() []uint16 {
	if t.dtype != F16 && t.dtype != BF16 {
		panic(fmt.Errorf("tensor: Uint16s on a %v tensor", t.dtype))
	}
	if len(t.data) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&t.data[0])), len(t.data)/2)
}

// Float returns element i (in row-major order) converted to float64, for any dtype.
func (t *Tensor) Float(i int) float64 {
	switch t.dtype {
	case F32:
		return float64(t.Float32s()[i])
	case F16:
		return float64(F16ToFloat32(t.Uint16s()[i]))
	case BF16:
		return float64(BF16ToFloat32(t.Uint16s()[i]))
	case I32:
		return float64(t.Int32s()[i])
	case I64:
		return float64(t.Int64s()[i])
	case Bool:
		return float64(t.data[i])
	}
	if f, ok := t.dtype.Format(); ok {
		var block [quant.QK]float32
		bs, bb := f.BlockSize(), f.BlockBytes()
		b := i / bs
		if err := f.Dequantize(block[:bs], t.data[b*bb:(b+1)*bb]); err != nil {
			panic(err)
		}
		return float64(block[i%bs])
	}
	panic(fmt.Errorf("tensor: Float on a %v tensor", t.dtype))
}

// At returns the element at index (one position per axis) converted to float64:
// p.At(i, j) is row i, column j of a (rows, columns) tensor. A wrong number of
// positions or a position outside its axis panics, as indexing a slice does.
func (t *Tensor) At(index ...int) float64 {
	if len(index) != len(t.shape) {
		panic(fmt.Errorf("tensor: At: %d positions for a tensor of shape %v (give one per axis)", len(index), t.shape))
	}
	off := 0
	for i, p := range index {
		if p < 0 || p >= t.shape[i] {
			panic(fmt.Errorf("tensor: At: position %d of axis %d is outside its size %d (shape %v)", p, i, t.shape[i], t.shape))
		}
		off = off*t.shape[i] + p
	}
	return t.Float(off)
}

// ArgMax returns the position of the largest value along axis (negative counts from
// the end) for every position of the other axes, as an I64 tensor without that axis:
// on a (samples, classes) prediction, ArgMax(-1) is each sample's predicted class. The
// first of equal largest values wins; NaN is never the largest.
func (t *Tensor) ArgMax(axis int) *Tensor {
	r := len(t.shape)
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r || t.shape[axis] == 0 {
		panic(fmt.Errorf("tensor: ArgMax: axis %d of a tensor of shape %v (want a non-empty axis)", axis, t.shape))
	}
	outer, n, inner := t.shape[:axis].Size(), t.shape[axis], t.shape[axis+1:].Size()
	out := New(I64, append(t.shape[:axis:axis], t.shape[axis+1:]...)...)
	d := out.Int64s()
	for o := range outer {
		for i := range inner {
			best, arg := math.Inf(-1), 0
			for k := range n {
				if v := t.Float((o*n+k)*inner + i); v > best {
					best, arg = v, k
				}
			}
			d[o*inner+i] = int64(arg)
		}
	}
	return out
}

// SetFloat stores v, converted to t's dtype, at element i. Integer types truncate toward
// zero; Bool stores v != 0.
func (t *Tensor) SetFloat(i int, v float64) {
	switch t.dtype {
	case F32:
		t.Float32s()[i] = float32(v)
	case F16:
		t.Uint16s()[i] = Float32ToF16(float32(v))
	case BF16:
		t.Uint16s()[i] = Float32ToBF16(float32(v))
	case I32:
		t.Int32s()[i] = int32(v)
	case I64:
		t.Int64s()[i] = int64(v)
	case Bool:
		if v != 0 {
			t.data[i] = 1
		} else {
			t.data[i] = 0
		}
	default:
		panic(fmt.Errorf("tensor: SetFloat on a %v tensor (quantised tensors are written whole: Convert an f32 tensor)", t.dtype))
	}
}

// Float64s returns a copy of the elements converted to float64.
func (t *Tensor) Float64s() []float64 {
	if t.dtype.IsQuantized() {
		t = t.Convert(F32)
	}
	out := make([]float64, t.Len())
	for i := range out {
		out[i] = t.Float(i)
	}
	return out
}

// Rows returns a 2-D tensor as a slice of rows of float64.
func (t *Tensor) Rows() ([][]float64, error) {
	if len(t.shape) != 2 {
		return nil, fmt.Errorf("tensor: Rows needs a 2-D tensor, have shape %v", t.shape)
	}
	r, c := t.shape[0], t.shape[1]
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = t.Float(i*c + j)
		}
	}
	return out, nil
}

// Dense returns a 2-D tensor as a gonum matrix.
func (t *Tensor) Dense() (*mat.Dense, error) {
	if len(t.shape) != 2 {
		return nil, fmt.Errorf("tensor: Dense needs a 2-D tensor, have shape %v", t.shape)
	}
	return mat.NewDense(t.shape[0], t.shape[1], t.Float64s()), nil
}

// Convert returns a copy of t with elements converted to dt. A quantised tensor
// converts to F32 by decoding its blocks; converting to a quantised type encodes F32
// values (see Quantize, which returns an error where Convert panics).
func (t *Tensor) Convert(dt DType) *Tensor {
	if dt == t.dtype {
		return t.Clone()
	}
	if dt.IsQuantized() {
		q, err := t.Quantize(dt)
		if err != nil {
			panic(err)
		}
		return q
	}
	if f, ok := t.dtype.Format(); ok {
		wide := New(F32, t.shape...)
		if err := f.Dequantize(wide.Float32s(), t.data); err != nil {
			panic(err)
		}
		return wide.Convert(dt)
	}
	out := New(dt, t.shape...)
	for i := 0; i < t.Len(); i++ {
		out.SetFloat(i, t.Float(i))
	}
	return out
}

// Quantize encodes t's values in the quantised type dt, block by block along the
// innermost dimension, which must be a multiple of dt's block size.
func (t *Tensor) Quantize(dt DType) (*Tensor, error) {
	f, ok := dt.Format()
	if !ok {
		return nil, fmt.Errorf("tensor: Quantize: %v is not a quantised type", dt)
	}
	if err := dt.CheckShape(t.shape); err != nil {
		return nil, err
	}
	src := t
	if t.dtype != F32 {
		src = t.Convert(F32)
	}
	out := New(dt, t.shape...)
	if err := f.Quantize(out.data, src.Float32s()); err != nil {
		return nil, err
	}
	return out, nil
}

// AllClose reports whether t and u have the same shape and every pair of elements
// satisfies |a-b| <= atol + rtol*|b|. NaNs compare equal to NaNs.
func (t *Tensor) AllClose(u *Tensor, rtol, atol float64) bool {
	if !t.shape.Equal(u.shape) {
		return false
	}
	for i := 0; i < t.Len(); i++ {
		a, b := t.Float(i), u.Float(i)
		if math.IsNaN(a) || math.IsNaN(b) {
			if math.IsNaN(a) != math.IsNaN(b) {
				return false
			}
			continue
		}
		if math.Abs(a-b) > atol+rtol*math.Abs(b) {
			return false
		}
	}
	return true
}

// String summarises the tensor: dtype, shape and up to the first 8 values.
func (t *Tensor) String() string {
	n := min(t.Len(), 8)
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%.4g", t.Float(i))
	}
	more := ""
	if t.Len() > n {
		more = " ..."
	}
	return fmt.Sprintf("Tensor(%v %v [%s%s])", t.dtype, t.shape, joinSpace(vals), more)
}

func joinSpace(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

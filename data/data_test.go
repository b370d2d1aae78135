package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// idxBytes encodes a uint8 IDX file of the given shape and values.
func idxBytes(shape []int, vals []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, idxUint8, byte(len(shape))})
	for _, d := range shape {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(vals)
	return b.Bytes()
}

func TestDecodeIDX(t *testing.T) {
	raw := idxBytes([]int{2, 3}, []byte{0, 1, 2, 253, 254, 255})
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(raw)
	w.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		dt   tensor.DType
		err  string
	}{
		{"raw f32", raw, tensor.F32, ""},
		{"gzip i64", gz.Bytes(), tensor.I64, ""},
		{"bad magic", []byte{1, 2, 3, 4, 5}, tensor.F32, "not an IDX file"},
		{"short", raw[:len(raw)-1], tensor.F32, "reading 6 elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeIDX(bytes.NewReader(tc.in), tc.dt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Shape().Equal(tensor.Shape{2, 3}) || got.DType() != tc.dt || got.Float(3) != 253 || got.Float(5) != 255 {
				t.Fatalf("got %v", got)
			}
		})
	}
}

func TestFashionMNISTMissing(t *testing.T) {
	_, err := FashionMNIST(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "dataset-fashion-mnist") || !strings.Contains(err.Error(), "train-images-idx3-ubyte") {
		t.Fatalf("err = %v, want one naming the file and the Debian package", err)
	}
}

func TestFashionMNISTFromDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"train-images-idx3-ubyte": idxBytes([]int{2, 1, 2}, []byte{0, 255, 51, 102}),
		"train-labels-idx1-ubyte": idxBytes([]int{2}, []byte{3, 9}),
		"t10k-images-idx3-ubyte":  idxBytes([]int{1, 1, 2}, []byte{255, 0}),
		"t10k-labels-idx1-ubyte":  idxBytes([]int{1}, []byte{1}),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := FashionMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.TrainX.Float(1) != 1 || !(math.Abs(d.TrainX.Float(2)-0.2) <= 1e-6) || d.TrainY.Int64s()[1] != 9 || d.TestY.Int64s()[0] != 1 {
		t.Fatalf("loaded %v: train x %v y %v", d, d.TrainX, d.TrainY)
	}
}

func TestOneHotTakeSplit(t *testing.T) {
	y, _ := tensor.FromInts(tensor.Shape{4}, []int{0, 2, 1, 2})
	oh, err := OneHot(y, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 0, 1}; oh.Float32s()[3] != want[0] || oh.Float32s()[5] != want[2] {
		t.Fatalf("one-hot %v", oh)
	}
	if _, err := OneHot(y, 2); err == nil {
		t.Fatal("label 2 with 2 classes: want error")
	}
	x, _ := tensor.FromFloat32s(tensor.Shape{4, 2}, []float32{0, 0, 1, 1, 2, 2, 3, 3})
	sel, err := Take(x, []int{3, 1})
	if err != nil || sel.Float(0) != 3 || sel.Float(2) != 1 {
		t.Fatalf("Take = %v, %v", sel, err)
	}
	trX, trY, teX, teY, err := Split(x, y, 0.25, 7)
	if err != nil {
		t.Fatal(err)
	}
	if trX.Shape()[0] != 3 || teX.Shape()[0] != 1 || trY.Len() != 3 || teY.Len() != 1 {
		t.Fatalf("split sizes %v %v", trX.Shape(), teX.Shape())
	}
	// Rows stay paired: x row r holds value r, y row r holds label y[r].
	labels := []float64{0, 2, 1, 2}
	for i := 0; i < 3; i++ {
		if labels[int(trX.Float(2*i))] != trY.Float(i) {
			t.Fatalf("row %d: x %v paired with y %v", i, trX.Float(2*i), trY.Float(i))
		}
	}
}

func TestScalers(t *testing.T) {
	x, _ := tensor.FromFloat32s(tensor.Shape{3, 2}, []float32{1, 5, 2, 5, 3, 5})
	s, err := FitStandardizer(x)
	if err != nil {
		t.Fatal(err)
	}
	z, _ := s.Apply(x)
	if z.Float(0) >= 0 || z.Float(2) != 0 || z.Float(1) != 0 {
		t.Fatalf("standardised %v", z)
	}
	m, _ := FitMinMax(x)
	u, _ := m.Apply(x)
	if u.Float(0) != 0 || u.Float(4) != 1 || u.Float(1) != 0 {
		t.Fatalf("min-max %v", u)
	}
	bad, _ := tensor.FromFloat32s(tensor.Shape{1, 3}, []float32{1, 2, 3})
	if _, err := s.Apply(bad); err == nil {
		t.Fatal("3 features into a 2-feature scaler: want error")
	}
}

func TestCSV(t *testing.T) {
	tab, err := DecodeCSV(strings.NewReader("a,b,species\n1,2.5,cat\n3,4,dog\n5,6,cat\n"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := tab.Tensor()
	if err != nil || !x.Shape().Equal(tensor.Shape{3, 2}) || x.Float(3) != 4 {
		t.Fatalf("Tensor = %v, %v", x, err)
	}
	y, classes, err := tab.Labels("species")
	if err != nil || len(classes) != 2 || y.Int64s()[1] != 1 {
		t.Fatalf("Labels = %v %v %v", y, classes, err)
	}
	if _, err := tab.Tensor("species"); err == nil || !strings.Contains(err.Error(), "not numeric") {
		t.Fatalf("non-numeric column: err = %v", err)
	}
	if _, err := tab.Tensor("nope"); err == nil {
		t.Fatal("missing column: want error")
	}
}

package data

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gml-dev/gml/tensor"
)

// DefaultFashionMNISTDir is where Debian's dataset-fashion-mnist package installs the data.
const DefaultFashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNISTClasses names the ten Fashion-MNIST classes by label.
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// Dataset is a train/test pair of inputs and labels, batch dimension first.
type Dataset struct {
	TrainX, TrainY *tensor.Tensor
	TestX, TestY   *tensor.Tensor
	Classes        []string
}

// String summarises the shapes.
func (d *Dataset) String() string {
	return fmt.Sprintf("Dataset(train x %v y %v, test x %v y %v, %d classes)", d.TrainX.Shape(), d.TrainY.Shape(), d.TestX.Shape(), d.TestY.Shape(), len(d.Classes))
}

// FashionMNIST loads Fashion-MNIST from dir: images as F32 [N, 28, 28] scaled to [0, 1],
// labels as I64 [N]. An empty dir means $GML_FASHION_MNIST, else DefaultFashionMNISTDir.
// Either the .gz files or uncompressed copies (same names without .gz) are accepted.
func FashionMNIST(dir string) (*Dataset, error) {
	return loadMNISTLike(dir, FashionMNISTClasses)
}

func loadMNISTLike(dir string, classes []string) (*Dataset, error) {
	if dir == "" {
		dir = os.Getenv("GML_FASHION_MNIST")
	}
	if dir == "" {
		dir = DefaultFashionMNISTDir
	}
	read := func(name string, dt tensor.DType) (*tensor.Tensor, error) {
		p := filepath.Join(dir, name+".gz")
		if _, err := os.Stat(p); err != nil {
			if _, err2 := os.Stat(filepath.Join(dir, name)); err2 == nil {
				p = filepath.Join(dir, name)
			}
		}
		return ReadIDX(p, dt)
	}
	d := &Dataset{Classes: classes}
	var err error
	if d.TrainX, err = read("train-images-idx3-ubyte", tensor.F32); err != nil {
		return nil, err
	}
	if d.TrainY, err = read("train-labels-idx1-ubyte", tensor.I64); err != nil {
		return nil, err
	}
	if d.TestX, err = read("t10k-images-idx3-ubyte", tensor.F32); err != nil {
		return nil, err
	}
	if d.TestY, err = read("t10k-labels-idx1-ubyte", tensor.I64); err != nil {
		return nil, err
	}
	for _, x := range []*tensor.Tensor{d.TrainX, d.TestX} {
		Scale(x, 1.0/255)
	}
	if d.TrainX.Shape()[0] != d.TrainY.Shape()[0] || d.TestX.Shape()[0] != d.TestY.Shape()[0] {
		return nil, fmt.Errorf("data: %s: image and label counts differ (%v)", dir, d)
	}
	return d, nil
}

package gguf_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/gml-dev/gml/gguf"
	"github.com/gml-dev/gml/tensor"
)

// A model's weights saved with quantisation and read back.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 4*256)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	weight, _ := tensor.FromFloat32s(tensor.Shape{4, 256}, x)

	w := gguf.NewWriter()
	w.Set("general.architecture", "toy")
	w.Set("toy.block_count", uint32(1))
	w.AddTensor("blk.0.ffn.weight", weight, gguf.Q4_K)
	path := filepath.Join(os.TempDir(), "example.gguf")
	if err := w.WriteFile(path); err != nil {
		fmt.Println(err)
		return
	}
	defer os.Remove(path)

	f, err := gguf.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	blocks, _ := f.Meta("toy.block_count").Int()
	fmt.Println(f.Architecture(), blocks)
	for _, ti := range f.Tensors() {
		fmt.Println(ti.Name, ti.Shape, ti.Type, ti.Size, "bytes")
	}
	back, _ := f.TensorData("blk.0.ffn.weight")
	fmt.Printf("first weight %.3f, read back as %.3f\n", x[0], back[0])
	// Output:
	// toy 1
	// blk.0.ffn.weight [4 256] Q4_K 576 bytes
	// first weight 0.379, read back as 0.291
}

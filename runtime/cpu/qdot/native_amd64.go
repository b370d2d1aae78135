//go:build amd64

package qdot

import "github.com/gml-dev/gml/tensor/quant"

// native returns the assembly dot product for f where there is one and the CPU can run it.
func native(quant.Format) Func { return nil }

//go:build !amd64

package qdot

import "github.com/gml-dev/gml/tensor/quant"

func native(quant.Format) Func { return nil }

//go:build !amd64

package qdot

import "github.com/gml-dev/gml/tensor/quant"

const nativeOK = false

func native(quant.Format) Func { return nil }

// Package onnxpb is the generated protobuf code for the subset of the ONNX format gml
// reads (onnx.proto, written for gml from the format's field numbers).
//
// Regenerate with `go generate ./onnx/internal/onnxpb` (part of `make generate`): it
// needs protoc (Debian protobuf-compiler) and builds protoc-gen-go at the version go.mod
// pins. TestGeneratedFresh fails when onnx.pb.go is stale.
package onnxpb

//go:generate go run ./gen

// Package backends links every gml backend into a program: importing it (as nn, ag
// and onnx do, and as the kernel does) registers the CPU backend and the Vulkan GPU
// backend with the runtime, so runtime.New finds them. A backend whose device is
// missing at run time (no Vulkan loader, no GPU) simply reports itself unavailable.
package backends

import (
	_ "github.com/gml-dev/gml/gpu"         // the Vulkan backend: available where a Vulkan device is
	_ "github.com/gml-dev/gml/runtime/cpu" // the CPU backend: always available
)

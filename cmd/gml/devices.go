package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gml-dev/gml/gpu"
	"github.com/gml-dev/gml/runtime"
)

func init() {
	register("devices", "list the Vulkan devices gml can use and the one it picks", runDevices)
}

// runDevices prints every Vulkan device as a table and names the one gml selects
// (GML_VK_DEVICE overrides the choice). With no usable Vulkan it prints one line and
// succeeds: the CPU backend is then used.
func runDevices(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("devices takes no arguments")
	}
	infos, err := gpu.Devices()
	if errors.Is(err, gpu.ErrNoVulkan) {
		fmt.Printf("no Vulkan device; gml uses the CPU (%v)\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Println(infos.String())
	d, err := gpu.Open()
	if err != nil {
		fmt.Printf("selected: none; gml uses the CPU (%v)\n", err)
		return nil
	}
	defer d.Close()
	fmt.Printf("selected: %d (%s)\n", d.Info.Index, d.Info.Name)
	// Starts the outside product library, if there is one, so that what is printed is
	// what a run would do (GML_CUDA=0 turns it off).
	fmt.Printf("matrix products: %s\n", d.CheckProductPath())
	var group []string
	for _, pd := range runtime.Devices().Devices {
		if pd.Info().Backend == "vulkan" {
			group = append(group, pd.ID())
		}
	}
	if len(group) > 1 {
		// Transfers between devices go through host memory, which works on every driver;
		// external memory or Vulkan device groups would be a faster path.
		fmt.Printf("device group: %s; transfers between them: host staging\n", strings.Join(group, ", "))
	}
	return nil
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
)

// kernelName is the kernelspec's directory name; front ends select the kernel by it.
const kernelName = "gml"

func init() {
	register("install", "install the Jupyter kernelspec: gml install [--user|--sys-prefix|--prefix DIR] [--uninstall]", runInstall)
}

// kernelSpec is the content of kernel.json.
type kernelSpec struct {
	Argv          []string       `json:"argv"`
	DisplayName   string         `json:"display_name"`
	Language      string         `json:"language"`
	InterruptMode string         `json:"interrupt_mode"`
	Metadata      map[string]any `json:"metadata"`
}

func runInstall(args []string) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	user := fs.Bool("user", false, "install for the current user (the default): $JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter")
	sysPrefix := fs.Bool("sys-prefix", false, "install into the Python environment of the jupyter on PATH (PREFIX/share/jupyter)")
	prefix := fs.String("prefix", "", "install into `DIR`/share/jupyter")
	uninstall := fs.Bool("uninstall", false, "remove the kernelspec from the chosen location instead")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	chosen := 0
	for _, b := range []bool{*user, *sysPrefix, *prefix != ""} {
		if b {
			chosen++
		}
	}
	if chosen > 1 {
		return errors.New("choose at most one of --user, --sys-prefix and --prefix")
	}
	dataDir, err := jupyterDataDir(*sysPrefix, *prefix)
	if err != nil {
		return err
	}
	dir := filepath.Join(dataDir, "kernels", kernelName)
	if *uninstall {
		if _, err := os.Stat(filepath.Join(dir, "kernel.json")); err != nil {
			return fmt.Errorf("no gml kernelspec in %s", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing the kernelspec: %w", err)
		}
		fmt.Printf("removed the gml kernelspec from %s\n", dir)
		return nil
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the gml binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	if err := writeKernelSpec(dir, bin); err != nil {
		return err
	}
	fmt.Printf("installed the gml kernelspec in %s (kernel: %s)\n", dir, bin)
	return nil
}

// jupyterDataDir returns the Jupyter data directory that the kernelspec goes under,
// following jupyter_core's rules for the user directory.
func jupyterDataDir(sysPrefix bool, prefix string) (string, error) {
	switch {
	case prefix != "":
		abs, err := filepath.Abs(prefix)
		if err != nil {
			return "", err
		}
		return filepath.Join(abs, "share", "jupyter"), nil
	case sysPrefix:
		jupyter, err := exec.LookPath("jupyter")
		if err != nil {
			return "", errors.New("--sys-prefix needs the jupyter command on PATH to find the environment; use --prefix DIR or --user")
		}
		abs, err := filepath.Abs(jupyter)
		if err != nil {
			return "", err
		}
		return filepath.Join(filepath.Dir(filepath.Dir(abs)), "share", "jupyter"), nil
	}
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jupyter"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for a --user install (set JUPYTER_DATA_DIR or use --prefix): %w", err)
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// writeKernelSpec writes kernel.json and the two logos into dir.
func writeKernelSpec(dir, bin string) error {
	spec := kernelSpec{
		Argv:          []string{bin, "kernel", "-f", "{connection_file}"},
		DisplayName:   "Go (gml)",
		Language:      "go",
		InterruptMode: "message",
		Metadata:      map[string]any{"debugger": false},
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the kernelspec directory: %w", err)
	}
	files := map[string][]byte{"kernel.json": append(data, '\n')}
	for _, size := range []int{32, 64} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, logo(size)); err != nil {
			return fmt.Errorf("encoding the logo: %w", err)
		}
		files[fmt.Sprintf("logo-%dx%d.png", size, size)] = buf.Bytes()
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			return fmt.Errorf("writing the kernelspec: %w", err)
		}
	}
	return nil
}

// logo draws gml's icon at size x size: a Go-blue disc carrying a small white network
// of three nodes, anti-aliased by 4x4 supersampling.
func logo(size int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	blue := color.NRGBA{0x00, 0xAD, 0xD8, 0xFF}
	// Geometry in the unit square.
	nodes := [][2]float64{{0.30, 0.34}, {0.70, 0.34}, {0.50, 0.70}}
	segDist := func(px, py float64, a, b [2]float64) float64 {
		dx, dy := b[0]-a[0], b[1]-a[1]
		t := math.Max(0, math.Min(1, ((px-a[0])*dx+(py-a[1])*dy)/(dx*dx+dy*dy)))
		return math.Hypot(px-a[0]-t*dx, py-a[1]-t*dy)
	}
	const ss = 4
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var disc, white float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					px := (float64(x) + (float64(sx)+0.5)/ss) / float64(size)
					py := (float64(y) + (float64(sy)+0.5)/ss) / float64(size)
					if math.Hypot(px-0.5, py-0.5) > 0.48 {
						continue
					}
					disc++
					on := false
					for i, n := range nodes {
						if math.Hypot(px-n[0], py-n[1]) < 0.09 || segDist(px, py, n, nodes[(i+1)%len(nodes)]) < 0.035 {
							on = true
						}
					}
					if on {
						white++
					}
				}
			}
			if disc == 0 {
				continue
			}
			w := white / disc
			mix := func(c uint8) uint8 { return uint8(float64(c)*(1-w) + 255*w + 0.5) }
			img.SetNRGBA(x, y, color.NRGBA{mix(blue.R), mix(blue.G), mix(blue.B), uint8(255*disc/(ss*ss) + 0.5)})
		}
	}
	return img
}

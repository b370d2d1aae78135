package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotebooks executes every notebook in notebooks/ twice, headless with `gml run`
// and through Jupyter with `jupyter nbconvert --execute` on the installed kernelspec,
// and requires both runs to finish with no error output.
func TestNotebooks(t *testing.T) {
	notebooks, err := filepath.Glob("../notebooks/*.ipynb")
	if err != nil || len(notebooks) == 0 {
		t.Fatalf("no notebooks found in ../notebooks (%v)", err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "JUPYTER_DATA_DIR="+filepath.Join(dir, "data"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(dir, "runtime"), "GML_HISTORY_FILE=", "PYTHONDONTWRITEBYTECODE=1")
	install := exec.Command(gmlBin, "install")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gml install: %v\n%s", err, out)
	}
	for _, nb := range notebooks {
		name := strings.TrimSuffix(filepath.Base(nb), ".ipynb")
		t.Run(name+"/gml_run", func(t *testing.T) {
			out := filepath.Join(dir, name+".run.ipynb")
			cmd := exec.Command(gmlBin, "run", nb, "-o", out)
			cmd.Env = env
			if log, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("gml run %s: %v\n%s", nb, err, log)
			}
			checkNoErrors(t, out)
		})
		t.Run(name+"/nbconvert", func(t *testing.T) {
			cmd := exec.Command("/usr/bin/python3", "-m", "nbconvert", "--to", "notebook", "--execute",
				"--ExecutePreprocessor.kernel_name=gml", "--ExecutePreprocessor.timeout=1800",
				"--output-dir", dir, "--output", name+".nbconvert", nb)
			cmd.Env = env
			if log, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("nbconvert --execute %s: %v\n%s", nb, err, log)
			}
			checkNoErrors(t, filepath.Join(dir, name+".nbconvert.ipynb"))
		})
	}
}

// checkNoErrors fails the test for every error output in the executed notebook at path.
func checkNoErrors(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb struct {
		Cells []struct {
			CellType string `json:"cell_type"`
			Outputs  []struct {
				OutputType string `json:"output_type"`
				EName      string `json:"ename"`
				EValue     string `json:"evalue"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("%s is not a notebook: %v", path, err)
	}
	executed := 0
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		executed++
		for _, o := range c.Outputs {
			if o.OutputType == "error" {
				t.Errorf("cell %d: %s", i+1, strings.TrimSpace(fmt.Sprintf("%s: %s", o.EName, o.EValue)))
			}
		}
	}
	if executed == 0 {
		t.Errorf("%s has no code cells", path)
	}
}

package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestJupyterDataDir(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		sysPrefix bool
		prefix    string
		want      string
	}{
		{"JUPYTER_DATA_DIR wins", map[string]string{"JUPYTER_DATA_DIR": "/j", "XDG_DATA_HOME": "/x", "HOME": "/h"}, false, "", "/j"},
		{"XDG_DATA_HOME", map[string]string{"JUPYTER_DATA_DIR": "", "XDG_DATA_HOME": "/x", "HOME": "/h"}, false, "", "/x/jupyter"},
		{"home", map[string]string{"JUPYTER_DATA_DIR": "", "XDG_DATA_HOME": "", "HOME": "/h"}, false, "", "/h/.local/share/jupyter"},
		{"prefix", map[string]string{"JUPYTER_DATA_DIR": "/j"}, false, "/opt/env", "/opt/env/share/jupyter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := jupyterDataDir(tc.sysPrefix, tc.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJupyterDataDirSysPrefix(t *testing.T) {
	env := t.TempDir()
	if err := os.MkdirAll(filepath.Join(env, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env, "bin", "jupyter"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(env, "bin"))
	got, err := jupyterDataDir(true, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(env, "share", "jupyter"); got != want {
		t.Errorf("--sys-prefix: got %q, want %q", got, want)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := jupyterDataDir(true, ""); err == nil {
		t.Error("--sys-prefix without jupyter on PATH succeeded")
	}
}

func TestInstallAndUninstall(t *testing.T) {
	data := t.TempDir()
	t.Setenv("JUPYTER_DATA_DIR", data)
	if err := runInstall(nil); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(data, "kernels", "gml")
	raw, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec kernelSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.DisplayName != "Go (gml)" || spec.Language != "go" || spec.InterruptMode != "message" ||
		len(spec.Argv) != 4 || !filepath.IsAbs(spec.Argv[0]) || spec.Argv[1] != "kernel" || spec.Argv[3] != "{connection_file}" {
		t.Errorf("kernel.json: %s", raw)
	}
	for name, size := range map[string]int{"logo-32x32.png": 32, "logo-64x64.png": 64} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Errorf("%s is %v", name, b)
		}
	}
	if err := runInstall([]string{"--uninstall"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("kernelspec still present after --uninstall: %v", err)
	}
	for _, args := range [][]string{{"--uninstall"}, {"--user", "--prefix", "/x"}, {"extra"}} {
		if err := runInstall(args); err == nil {
			t.Errorf("gml install %q succeeded", args)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestMutationList keeps the list usable as the code changes: every snippet occurs
// exactly once in its file (a change to a mutated line must update its mutation, or
// make mutate would report it untried), names are unique, and every package a
// mutation runs exists.
func TestMutationList(t *testing.T) {
	root := filepath.Join("..", "..")
	areas := []string{"tensor", "runtime/cpu", "gpu", "nn", "kernel"}
	name := regexp.MustCompile(`^[a-z0-9_]+$`)
	seen := map[string]bool{}
	for _, m := range mutations {
		if !name.MatchString(m.name) || seen[m.name] {
			t.Errorf("%q: names are unique, in lower case with underscores", m.name)
		}
		seen[m.name] = true
		if !slices.Contains(areas, m.area) {
			t.Errorf("%s: area %q is none of %v", m.name, m.area, areas)
		}
		if m.about == "" || len(m.edits) == 0 || len(m.pkgs) == 0 {
			t.Errorf("%s: needs a description, edits and packages", m.name)
		}
		for _, e := range m.edits {
			data, err := os.ReadFile(filepath.Join(root, e.file))
			if err != nil {
				t.Errorf("%s: %v", m.name, err)
				continue
			}
			if n := bytes.Count(data, []byte(e.old)); n != 1 {
				t.Errorf("%s: %s: %q occurs %d times, want once", m.name, e.file, firstLine(e.old), n)
			}
			if e.old == e.new {
				t.Errorf("%s: %s: the edit changes nothing", m.name, e.file)
			}
			if strings.HasPrefix(e.file, "shaders/src/") != m.regen {
				t.Errorf("%s: regen must be set exactly when a shader source is edited", m.name)
			}
		}
		for _, p := range m.pkgs {
			if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(p, "/..."))); err != nil {
				t.Errorf("%s: package %s: %v", m.name, p, err)
			}
		}
	}
}

func TestLeaves(t *testing.T) {
	cases := []struct {
		failed, want []string
	}{
		{nil, nil},
		{[]string{"p TestA/x", "p TestA", "p TestB"}, []string{"p TestA/x", "p TestB"}},
		// A parent failing by itself, with no failing subtest, is a leaf too.
		{[]string{"p TestA"}, []string{"p TestA"}},
		{[]string{"p T1", "p T2", "p T3", "p T4", "p T5", "p T6"}, []string{"p T1", "p T2", "p T3", "p T4", "(+2 more)"}},
		// TestAB is not a subtest of TestA.
		{[]string{"p TestA", "p TestAB"}, []string{"p TestA", "p TestAB"}},
	}
	for _, c := range cases {
		if got := leaves(c.failed); !slices.Equal(got, c.want) {
			t.Errorf("leaves(%q) = %q, want %q", c.failed, got, c.want)
		}
	}
}

func TestWriteTableShare(t *testing.T) {
	results := []result{
		{Name: "a", Files: []string{"x.go", "x.go"}, Result: caught, CaughtBy: []string{"p TestA"}},
		{Name: "b", Files: []string{"y.go"}, Result: notCaught},
		{Name: "c", Files: []string{"z.go"}, Result: notFound, Detail: "z.go: \"old\""},
	}
	var b bytes.Buffer
	writeTable(&b, results)
	out := b.String()
	for _, want := range []string{
		"| a | x.go | caught | p TestA |",
		"| c | z.go | snippet not found | z.go: \"old\" |",
		"caught 1 of 2 mutations (50%); not caught: b; not tried: c (snippet not found)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

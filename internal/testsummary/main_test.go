package main

import (
	"bytes"
	"strings"
	"testing"
)

// events builds a test2json stream from "Action Package Test Output" lines, with
// Output's \n written as \n.
func events(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		f := strings.SplitN(l, "|", 4)
		for len(f) < 4 {
			f = append(f, "")
		}
		b.WriteString(`{"Action":"` + f[0] + `","Package":"` + f[1] + `","Test":"` + f[2] + `","Output":"` + f[3] + `"}` + "\n")
	}
	return b.String()
}

func TestSummarize(t *testing.T) {
	const pkg = "github.com/gml-dev/gml/gpu"
	cases := []struct {
		name   string
		in     string
		failed bool
		want   []string // substrings of the output, in order
		absent []string
	}{
		{"passes and skips", events(
			"start|"+pkg,
			"run|"+pkg+"|TestAdd",
			`output|`+pkg+`|TestAdd|=== RUN   TestAdd\n`,
			`output|`+pkg+`|TestAdd|    add_test.go:9: noise of a passing test\n`,
			"pass|"+pkg+"|TestAdd",
			"run|"+pkg+"|TestCoop",
			"run|"+pkg+"|TestCoop/f16",
			`output|`+pkg+`|TestCoop/f16|=== RUN   TestCoop/f16\n`,
			`output|`+pkg+`|TestCoop/f16|    coop_test.go:31: cooperative-matrix shaders: no device support\n`,
			`output|`+pkg+`|TestCoop/f16|--- SKIP: TestCoop/f16 (0.00s)\n`,
			"skip|"+pkg+"|TestCoop/f16",
			"run|"+pkg+"|TestCoop/bf16",
			`output|`+pkg+`|TestCoop/bf16|    coop_test.go:31: cooperative-matrix shaders: no device support\n`,
			"skip|"+pkg+"|TestCoop/bf16",
			"pass|"+pkg+"|TestCoop",
			`output|`+pkg+`||PASS\n`,
			`output|`+pkg+`||ok  \t`+pkg+`\t0.5s\n`,
			"pass|"+pkg,
			"start|github.com/gml-dev/gml/data",
			"run|github.com/gml-dev/gml/data|TestFashion",
			`output|github.com/gml-dev/gml/data|TestFashion|    fashion_test.go:12: no dataset: install dataset-fashion-mnist\n`,
			"skip|github.com/gml-dev/gml/data|TestFashion",
			"pass|github.com/gml-dev/gml/data",
		), false, []string{
			"ok  \t" + pkg,
			"skipped (3):",
			"  cooperative-matrix shaders: no device support\n    gpu TestCoop/f16\n    gpu TestCoop/bf16",
			"  no dataset: install dataset-fashion-mnist\n    data TestFashion",
			"not run here: cooperative-matrix shaders: no device support (2); no dataset: install dataset-fashion-mnist (1)\n",
		}, []string{"noise of a passing test", "PASS\n", "FAILED"}},
		{"a failing subtest", events(
			"start|"+pkg,
			"run|"+pkg+"|TestSoftmax",
			"run|"+pkg+"|TestSoftmax/logit100",
			`output|`+pkg+`|TestSoftmax/logit100|    softmax_test.go:20: NaN at 0\n`,
			`output|`+pkg+`|TestSoftmax/logit100|--- FAIL: TestSoftmax/logit100 (0.00s)\n`,
			"fail|"+pkg+"|TestSoftmax/logit100",
			`output|`+pkg+`|TestSoftmax|--- FAIL: TestSoftmax (0.00s)\n`,
			"fail|"+pkg+"|TestSoftmax",
			`output|`+pkg+`||FAIL\n`,
			"fail|"+pkg,
		), true, []string{
			"softmax_test.go:20: NaN at 0",
			"FAILED (2):\n  gpu TestSoftmax/logit100\n  gpu TestSoftmax\n",
			"not run here: nothing",
		}, []string{"--- FAIL: TestSoftmax (0.00s)"}},
		{"a build failure", `{"ImportPath":"github.com/gml-dev/gml/nn [github.com/gml-dev/gml/nn.test]","Action":"build-output","Output":"nn/x.go:3: undefined: y\n"}
{"ImportPath":"github.com/gml-dev/gml/nn [github.com/gml-dev/gml/nn.test]","Action":"build-fail"}
` + events("start|github.com/gml-dev/gml/nn", `output|github.com/gml-dev/gml/nn||FAIL\tgithub.com/gml-dev/gml/nn [build failed]\n`, "fail|github.com/gml-dev/gml/nn"),
			true, []string{"undefined: y", "[build failed]", "FAILED"}, nil},
		{"a stream cut short", events("start|"+pkg, "run|"+pkg+"|TestLong"), true,
			[]string{"FAIL\t" + pkg + "\t(no result"}, nil},
		{"lines that are not events pass through", "# vet output\n" + events("start|"+pkg, "pass|"+pkg), false,
			[]string{"# vet output\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			failed, err := summarize(strings.NewReader(c.in), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != c.failed {
				t.Errorf("failed = %v, want %v", failed, c.failed)
			}
			got := out.String()
			at := 0
			for _, w := range c.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order) after byte %d:\n%s", w, at, got)
				}
				at += i + len(w)
			}
			for _, a := range c.absent {
				if strings.Contains(got, a) {
					t.Errorf("output holds %q:\n%s", a, got)
				}
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"=== RUN   TestX\n", "    gpu_test.go:22: no Vulkan loader or device on this machine: x\n", "--- SKIP: TestX (0.00s)\n"}, "no Vulkan loader or device on this machine: x"},
		{[]string{"--- SKIP: TestX (0.00s)\n"}, "no reason given"},
		{[]string{"    a_test.go:1: first\n", "    a_test.go:2: second\n"}, "first second"},
	} {
		if got := skipReason(c.lines); got != c.want {
			t.Errorf("skipReason(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
}

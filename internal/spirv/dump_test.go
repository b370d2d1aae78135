package spirv

import (
	"strings"
	"testing"
)

func TestDump(t *testing.T) {
	b, err := computeModule().Bytes()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dump(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"; version 1.6",
		"OpCapability 1\n",
		`OpName 16 "main"`, // main is id 16 in computeModule
		"OpExecutionMode 16 17 1 1 1\n",
		"= OpTypeInt 32 0\n",
		"OpLoopMerge ",
		"OpReturn\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("dump lacks %q:\n%s", want, s)
		}
	}
}

func TestParseErrors(t *testing.T) {
	good, _ := computeModule().Bytes()
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", good[:12], "not a SPIR-V module"},
		{"odd length", good[:len(good)-1], "not a SPIR-V module"},
		{"bad magic", append([]byte{1, 2, 3, 4}, good[4:]...), "bad magic"},
		{"word count past the end", func() []byte {
			b := append([]byte(nil), good...)
			b[len(b)-2] = 5 // OpFunctionEnd claims five words
			return b
		}(), "bad word count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

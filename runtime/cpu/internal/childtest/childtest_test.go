package childtest

import (
	"os"
	"strings"
	"testing"
)

// TestRunPassesEnvironment reruns TestChildSeesEnvironment in a child, which fails
// unless it sees both the child marker and the variable given.
func TestRunPassesEnvironment(t *testing.T) {
	if InChild() {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	for _, c := range []struct {
		env  string
		fail bool
	}{
		{"GML_CHILDTEST_WANT=yes", false},
		{"GML_CHILDTEST_WANT=no", true},
	} {
		out, err := Run("^TestChildSeesEnvironment$", c.env)
		if (err != nil) != c.fail {
			t.Errorf("%s: err = %v, want failure %v\n%s", c.env, err, c.fail, out)
		}
		if !c.fail && !strings.Contains(string(out), "PASS") {
			t.Errorf("%s: the child did not report PASS:\n%s", c.env, out)
		}
	}
}

func TestChildSeesEnvironment(t *testing.T) {
	if !InChild() {
		t.Skip("runs only as a child of TestRunPassesEnvironment")
	}
	if got := os.Getenv("GML_CHILDTEST_WANT"); got != "yes" {
		t.Fatalf("GML_CHILDTEST_WANT = %q in the child, want yes", got)
	}
}

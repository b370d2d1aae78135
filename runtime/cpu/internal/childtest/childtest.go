// Package childtest reruns tests of the CPU backend in child processes of the test
// binary with an environment variable set. The SIMD level, the GEMM kernel and the
// thread count are chosen once per process, so only a new process runs another path.
package childtest

import (
	"os"
	"os/exec"
	"testing"
)

// childVar marks a child process, so that a test that reruns others does not rerun
// itself in the child.
const childVar = "GML_TEST_CHILD"

// InChild reports whether this process is a child started by Run.
func InChild() bool { return os.Getenv(childVar) != "" }

// Run runs the tests of this binary that match pattern (a -test.run expression) in a
// child process whose environment adds env (NAME=value entries), and returns the
// child's combined output.
func Run(pattern string, env ...string) ([]byte, error) {
	cmd := exec.Command(os.Args[0], "-test.run="+pattern, "-test.count=1")
	cmd.Env = append(append(os.Environ(), childVar+"=1"), env...)
	return cmd.CombinedOutput()
}

// Rerun runs the tests matching pattern once per entry of envs, each in its own child
// process, and fails t with the child's output when one fails. It skips t in a child and
// under -short: the children take some seconds, and under qemu-user (make test-arm64)
// a test binary cannot start another.
func Rerun(t *testing.T, pattern string, envs ...string) {
	t.Helper()
	if InChild() {
		t.Skip("in a child process already")
	}
	if testing.Short() {
		t.Skip("-short: no child processes")
	}
	for _, env := range envs {
		if out, err := Run(pattern, env); err != nil {
			t.Errorf("%s: %v\n%s", env, err, out)
		}
	}
}

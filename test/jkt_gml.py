"""jupyter_kernel_test against the installed gml kernelspec.

Run by test/kernel_test.go (TestJupyterKernelTest) with Debian's /usr/bin/python3 and
JUPYTER_DATA_DIR pointing at a directory where `gml install` put the kernelspec.
"""

import unittest

import jupyter_kernel_test


class GmlKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "gml"
    language_name = "go"
    file_extension = ".go"

    code_hello_world = 'import "fmt"\nfmt.Println("hello, world")'
    code_stderr = 'import (\n\t"fmt"\n\t"os"\n)\nfmt.Fprintln(os.Stderr, "to stderr")'

    # Matches replace the identifier before the cursor, so after "pkg." they are member names.
    completion_samples = [
        {"text": "display.Mark", "matches": {"Markdown"}},
        {"text": "strings.ToUpp", "matches": {"ToUpper", "ToUpperSpecial"}},
        {"text": "fu", "matches": {"func"}},
    ]
    complete_code_samples = ["1+1", "x := 1", "func f() int { return 1 }", 'import "fmt"']
    incomplete_code_samples = ["func f() int {", "for i := 0; i < 3; i++ {", "x := []int{1,"]
    invalid_code_samples = ["x := )", "func ) {", "1 +* 2 }"]

    code_generate_error = 'panic("boom")'
    code_execute_result = [
        {"code": "1+1", "result": "2"},
        {"code": "6*7", "result": "42"},
        {"code": 'display.HTML("<b>hi</b>")', "mime": "text/html"},
    ]
    code_display_data = [
        {"code": 'display.Show(display.HTML("<b>hi</b>"))', "mime": "text/html"},
        {"code": 'display.Show(display.Markdown("*hi*"))', "mime": "text/markdown"},
    ]
    code_history_pattern = "1?1"
    supported_history_operations = ("tail", "range", "search")
    code_inspect_sample = "strings.ToUpper"
    code_clear_output = "display.ClearOutput(false)"


if __name__ == "__main__":
    unittest.main()

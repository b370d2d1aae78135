# gml: build, test and run. `make run` and `make test` work on a fresh Debian machine as root.
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(HOME)/go/bin:$(PATH)
GO ?= go
BIN := bin/gml
GOFLAGS_TEST ?= -count=1 -timeout 60m

.PHONY: all deps build kernelspec run test test-arm64 unit e2e lint fuzz generate shaders bench mutate clean

all: build

deps:
	./install/deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/gml

kernelspec: build
	./$(BIN) install

run: deps build kernelspec
	./$(BIN) run notebooks/quickstart.ipynb

# The whole suite: formatting, vet, generated files fresh, unit and end-to-end tests.
# internal/testsummary prints go test's usual output and ends with what did not run
# on this machine (every skipped test and its reason); it fails when a test fails.
test: deps build kernelspec lint $(if $(filter amd64,$(shell $(GO) env GOHOSTARCH)),test-arm64)
	set -o pipefail; $(GO) test -json $(GOFLAGS_TEST) ./... | $(GO) run ./internal/testsummary
	$(MAKE) fuzz

# arm64 from this x86-64 machine: the module builds and vets for arm64 (cgo through
# Debian's cross gcc), and the CPU backend's tests (gemm's NEON kernel under them) pass
# under qemu-user, without cgo so the test binaries are static. -short skips the tests
# that re-run their own binary (qemu-user cannot exec an arm64 binary from inside one
# without binfmt_misc) and gemm's runs of the Go kernels, which the x86-64 run covers.
# qemu's timings mean nothing. Only x86-64 hosts run it as part of `make test`: an arm64
# host runs the NEON kernel natively in the main suite.
ARM64_CGO := GOARCH=arm64 CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc
ARM64_TEST_PKGS := ./runtime/cpu/ ./runtime/cpu/gemm/ ./runtime/cpu/conv/ ./runtime/cpu/vec/
test-arm64:
	$(ARM64_CGO) $(GO) build ./...
	$(ARM64_CGO) $(GO) vet ./...
	GOARCH=arm64 CGO_ENABLED=0 $(GO) test $(GOFLAGS_TEST) -short -exec qemu-aarch64 $(ARM64_TEST_PKGS)

# Fuzzes the parsers of untrusted files for a short budget (a crash fails the build).
# Budgets are counted in executions (about 30 s each on a 2-core machine): a budget in
# time races Go 1.26's fuzz coordinator at its deadline (golang/go#75804), which then
# fails with "context deadline exceeded" and no crasher. Minimisation is bounded by
# executions too: by time it can take a minute per input.
FUZZ_GGUF ?= 300000x
FUZZ_ONNX ?= 100000x
fuzz:
	$(GO) test ./gguf -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZ_GGUF) -fuzzminimizetime 200x
	$(GO) test ./onnx -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZ_ONNX) -fuzzminimizetime 200x

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Regenerates every committed generated file (yaegi symbol tables, the op codes of the
# op table in Go and GLSL, SPIR-V, ONNX protobuf code).
generate:
	$(GO) generate ./...


shaders:
	$(GO) generate ./shaders

bench: build
	./$(BIN) bench cpu

# Plants each bug of internal/mutate's list in a scratch copy and reports which ones the
# tests catch (tens of minutes, niced; not part of make test). MUTATE=REGEXP runs a subset.
# The reports in bin/ are rewritten after each mutation.
mutate:
	mkdir -p bin
	nice -n 10 $(GO) run ./internal/mutate -json bin/mutate-report.json -md bin/mutate-report.md $(if $(MUTATE),-run '$(MUTATE)')

clean:
	rm -rf bin

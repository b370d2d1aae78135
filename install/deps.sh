#!/usr/bin/env bash
# Installs the Debian packages gml needs to build and to run its whole test suite.
# Safe to run repeatedly: it does nothing when every package is already present.
set -euo pipefail

packages=(
  gcc pkg-config                       # cgo (Vulkan loader, OpenBLAS)
  libvulkan-dev libvulkan1 mesa-vulkan-drivers glslc   # Vulkan backend, lavapipe for tests
  spirv-tools                          # spirv-val checks the SPIR-V our generator writes
  libopenblas-dev                      # the CPU backend's sgemm reference and fast path
  python3-jupyter-client python3-jupyter-kernel-test jupyter-nbconvert python3-nbclient
  python3-nbformat python3-onnx        # notebook validation, ONNX test-data tooling
  protobuf-compiler                    # protoc: `make generate` and the freshness test of onnx/internal/onnxpb
  dataset-fashion-mnist                # /usr/share/datasets/fashion-mnist
)
# make test-arm64 (x86-64 hosts only): cross cgo, and the arm64 tests under qemu-user.
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install/deps.sh: missing Debian packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install/deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

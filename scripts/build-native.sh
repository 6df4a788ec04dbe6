#!/usr/bin/env bash
# Builds the agent's native library (release profile) for linux-x86_64 against glibc 2.17, so the
# same JAR loads on RHEL 7/8 and newer, and copies it to the directory given, which Maven packs into
# the agent JAR. Uses cargo-zigbuild (zig as the linker pinned to old glibc symbols); both come from
# PyPI and are installed here when missing.
# Usage: scripts/build-native.sh <output-dir>
set -euo pipefail
out="${1:?usage: build-native.sh <output-dir>}"
cd "$(dirname "$0")/.."
target=x86_64-unknown-linux-gnu
glibc=2.17
if ! command -v cargo-zigbuild >/dev/null 2>&1 || ! python3 -c "import ziglang" 2>/dev/null; then
  echo "installing ziglang and cargo-zigbuild from PyPI (build tools for the glibc $glibc baseline)"
  python3 -m pip install --quiet --disable-pip-version-check "ziglang==0.17.1" "cargo-zigbuild==0.24.1"
  hash -r
fi
cargo zigbuild --release --locked -p grantforge-jni --target "$target.$glibc"
mkdir -p "$out"
cp "target/$target/release/libgrantforge_kafka_jni.so" "$out/libgrantforge_kafka_jni.so"
scripts/check-native-library.sh "$out/libgrantforge_kafka_jni.so"

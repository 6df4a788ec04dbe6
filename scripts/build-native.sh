#!/usr/bin/env bash
# Builds the agent's native library (release profile) for every platform the JAR carries and copies
# each to <output-dir>/<platform>/, which Maven packs into the agent JAR under native/:
#   linux-x86_64, linux-aarch64            glibc 2.17 and newer (RHEL 7/8 and newer, Debian, Ubuntu, UBI)
#   linux-musl-x86_64, linux-musl-aarch64  musl (Alpine: the official apache/kafka image)
# The loader (NativeLibraryLoader.java) picks one by the JVM's architecture and C library. Each
# library is checked (scripts/check-native-library.sh). zig links them (cargo-zigbuild), pinned to
# old glibc symbols; both come from PyPI, and each target's standard library from rustup, installed
# here when missing.
# Usage: scripts/build-native.sh <output-dir>
#   GF_NATIVE_PLATFORMS="linux-x86_64" builds only those (a faster build while developing; the
#   tests of the other platforms then fail for want of their library).
set -euo pipefail
out="${1:?usage: build-native.sh <output-dir>}"
cd "$(dirname "$0")/.."
glibc=2.17
declare -A rust_target=(
  [linux-x86_64]=x86_64-unknown-linux-gnu
  [linux-aarch64]=aarch64-unknown-linux-gnu
  [linux-musl-x86_64]=x86_64-unknown-linux-musl
  [linux-musl-aarch64]=aarch64-unknown-linux-musl
)
platforms=(${GF_NATIVE_PLATFORMS:-linux-x86_64 linux-aarch64 linux-musl-x86_64 linux-musl-aarch64})
if ! command -v cargo-zigbuild >/dev/null 2>&1 || ! python3 -c "import ziglang" 2>/dev/null; then
  echo "installing ziglang and cargo-zigbuild from PyPI (the linker for every platform)"
  python3 -m pip install --quiet --disable-pip-version-check "ziglang==0.17.1" "cargo-zigbuild==0.24.1"
  hash -r
fi
installed=$(rustup target list --installed)
targets=()
for platform in "${platforms[@]}"; do
  target="${rust_target[$platform]:?unknown platform $platform (known: ${!rust_target[*]})}"
  if ! grep -qx "$target" <<<"$installed"; then
    echo "installing the Rust standard library for $target (rustup)"
    rustup target add "$target"
  fi
  case "$target" in
    *-gnu) targets+=(--target "$target.$glibc") ;;
    *) targets+=(--target "$target") ;;
  esac
done
# musl targets link musl statically by default, which a shared library cannot: link it dynamically,
# as Alpine's own libraries do (musl's loader is the JVM's).
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
cargo zigbuild --release --locked -p grantforge-jni "${targets[@]}"
for platform in "${platforms[@]}"; do
  mkdir -p "$out/$platform"
  cp "${CARGO_TARGET_DIR:-target}/${rust_target[$platform]}/release/libgrantforge_kafka_jni.so" "$out/$platform/libgrantforge_kafka_jni.so"
  scripts/check-native-library.sh "$out/$platform/libgrantforge_kafka_jni.so" "$platform"
done

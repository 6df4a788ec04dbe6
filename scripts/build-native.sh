#!/usr/bin/env bash
# Builds the agent's native library (release profile) for every platform the JAR carries and copies
# each to <output-dir>/<platform>/, which Maven packs into the agent JAR under native/:
#   linux-x86_64, linux-aarch64            glibc 2.17 and newer (RHEL 7/8 and newer, Debian, Ubuntu, UBI)
#   linux-musl-x86_64, linux-musl-aarch64  musl (Alpine: the official apache/kafka image)
# The loader (NativeLibraryLoader.java) picks one by the JVM's architecture and C library. Each
# library's linkage is checked (scripts/check-native-library.sh; loading the musl ones with musl's own
# loader is a test, not part of the build). zig links them (cargo-zigbuild), pinned to old glibc
# symbols; both come from PyPI, and each target's standard library from rustup, installed here when
# missing: the build needs no root and nothing beyond the README's prerequisites.
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
# zig and cargo-zigbuild go into a folder of this project's (pip --target), not into the user's
# Python: that needs no root and no venv, and works with a distribution's externally managed Python
# (PEP 668), where a plain `pip install` is refused. Pinned versions, one folder per pin.
zig_version=0.17.1
zigbuild_version=0.24.1
tools="${GF_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/grantforge-kafka/tools}/zig-$zig_version-zigbuild-$zigbuild_version"
# the folder's own files: an import test would also pass with a ziglang of the user's Python
if [[ ! -x "$tools/bin/cargo-zigbuild" || ! -f "$tools/ziglang/__main__.py" ]]; then
  echo "installing ziglang $zig_version and cargo-zigbuild $zigbuild_version from PyPI into $tools (the linker for every platform)"
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --upgrade \
    --target "$tools" "ziglang==$zig_version" "cargo-zigbuild==$zigbuild_version"
fi
# cargo-zigbuild runs zig as `python3 -m ziglang` when no zig is on PATH. Its linker wrappers go
# with the builds they link: the linker's path is part of what cargo compares, so two checkouts
# (CI's first-run check and its test command) share release builds only if it is the same.
export PATH="$tools/bin:$PATH" PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}"
export CARGO_ZIGBUILD_CACHE_DIR="${CARGO_ZIGBUILD_CACHE_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/cargo-zigbuild}"
hash -r
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

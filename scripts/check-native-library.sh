#!/usr/bin/env bash
# Checks that the native libraries of the JAR load on the hosts of their platforms, in two steps:
#
#   check-native-library.sh <lib.so> <platform>
#     What the build checks, with binutils alone (no root, no emulator, no other libc): built for the
#     right machine; for glibc, no dynamic symbol needs a glibc newer than 2.17 and it depends on
#     nothing beyond libc, libm, libdl, libpthread, libgcc_s and the loader; for musl, no glibc symbol
#     at all and nothing beyond musl's libc.
#
#   check-native-library.sh --load <native-dir> <platform>...
#     What the tests check: musl's own loader (under qemu-user for another machine) loads each musl
#     library of <native-dir>/<platform>/ and binds every symbol of it, as Alpine's JVM does; no musl
#     JVM is reachable, so this is the only load of those libraries. It needs another libc and an
#     emulator, which only the test command installs (scripts/install-test-platforms, as root): the
#     build never runs it. Platforms other than musl are skipped (the shim's tests load them in a
#     JVM). GF_MUSL_LOADER_DIR (default /lib) is where musl's loaders are looked for.
#
# Exit 1 and a message naming the offender.
set -euo pipefail
usage="usage: check-native-library.sh <lib.so> <platform> | --load <native-dir> <platform>..."
library_name=libgrantforge_kafka_jni.so
max_glibc=2.17

check_linkage() {
  local lib=$1 platform=$2 machine loader needed allowed what newest dependency
  case "$platform" in
    linux-x86_64) machine='X86-64'; loader='ld-linux-x86-64\.so\.2' ;;
    linux-aarch64) machine='AArch64'; loader='ld-linux-aarch64\.so\.1' ;;
    linux-musl-x86_64) machine='X86-64' ;;
    linux-musl-aarch64) machine='AArch64' ;;
    *) echo "FAIL: unknown platform $platform" >&2; exit 1 ;;
  esac
  if ! readelf -h "$lib" | grep -q "Machine:.*$machine"; then
    echo "FAIL: $lib is not built for $platform: $(readelf -h "$lib" | grep Machine:)" >&2
    exit 1
  fi
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  case "$platform" in
    linux-musl-*)
      if objdump -T "$lib" | grep -q 'GLIBC_'; then
        echo "FAIL: $lib (musl) needs glibc symbols, among them:" >&2
        objdump -T "$lib" | grep 'GLIBC_' | head -20 >&2
        exit 1
      fi
      allowed='^(libc\.so)$'
      what="no glibc symbol and only musl's libc"
      ;;
    *)
      newest=$(objdump -T "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
      if [[ -n "$newest" && "$(printf '%s\n%s\n' "$newest" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]]; then
        echo "FAIL: $lib needs GLIBC_$newest (> $max_glibc) for:" >&2
        objdump -T "$lib" | grep "GLIBC_$newest" >&2
        exit 1
      fi
      allowed="^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|libgcc_s\.so\.1|$loader)$"
      what="at most GLIBC_${newest:-none} and only libc/libm/libdl/libpthread/libgcc_s/the loader"
      ;;
  esac
  while read -r dependency; do
    if [[ -n "$dependency" ]] && ! [[ "$dependency" =~ $allowed ]]; then
      echo "FAIL: $lib depends on $dependency, which hosts of $platform may lack" >&2
      exit 1
    fi
  done <<<"$needed"
  echo "ok: $lib ($platform, $(du -k "$lib" | cut -f1) KiB) needs $what"
}

# musl's loader as ldd: loads the library and binds every symbol, naming each one it cannot find.
check_musl_load() {
  local lib=$1 platform=$2 arch musl_loader run=() bound
  arch="${platform#linux-musl-}"
  musl_loader="${GF_MUSL_LOADER_DIR:-/lib}/ld-musl-$arch.so.1"
  [[ "$arch" == "$(uname -m)" ]] || run=("qemu-$arch-static")
  if [[ ! -e "$musl_loader" ]] || { [[ ${#run[@]} -gt 0 ]] && ! command -v "${run[0]}" >/dev/null; }; then
    echo "FAIL: $musl_loader${run:+ and ${run[0]}} are needed to load $lib as Alpine would; scripts/install-test-platforms installs them (scripts/test runs it)" >&2
    exit 1
  fi
  if ! bound=$("${run[@]}" "$musl_loader" --list "$lib" 2>&1); then
    echo "FAIL: musl's loader cannot load $lib:" >&2
    echo "$bound" >&2
    exit 1
  fi
  echo "ok: musl's loader ($musl_loader${run:+ under ${run[0]}}) binds every symbol of $lib"
}

if [[ "${1:-}" == "--load" ]]; then
  dir="${2:?$usage}"
  shift 2
  # unquoted: Maven passes the platforms as one space-separated argument
  for platform in $*; do
    [[ "$platform" == linux-musl-* ]] || continue
    lib="$dir/$platform/$library_name"
    [[ -f "$lib" ]] || { echo "FAIL: no library at $lib: build the JAR first" >&2; exit 1; }
    check_musl_load "$lib" "$platform"
  done
else
  check_linkage "${1:?$usage}" "${2:?$usage}"
fi

#!/usr/bin/env bash
# Checks that a native library of the JAR loads on the hosts of its platform: built for the right
# machine; for glibc, no dynamic symbol needs a glibc newer than 2.17 and it depends on nothing beyond
# libc, libm, libdl, libpthread, libgcc_s and the loader; for musl, no glibc symbol at all, nothing
# beyond musl's libc, and musl's own loader (under qemu-user for aarch64) binds every symbol of it:
# what Alpine's JVM does when it loads the library (scripts/install-test-platforms installs both).
# Usage: scripts/check-native-library.sh <lib.so> <platform>   (exit 1 and a message naming the offender)
set -euo pipefail
lib="${1:?usage: check-native-library.sh <lib.so> <platform>}"
platform="${2:?usage: check-native-library.sh <lib.so> <platform>}"
max_glibc=2.17
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
if [[ "$platform" == linux-musl-* ]]; then
  arch="${platform#linux-musl-}"
  musl_loader="/lib/ld-musl-$arch.so.1"
  run=()
  [[ "$arch" == "$(uname -m)" ]] || run=("qemu-$arch-static")
  if [[ ! -e "$musl_loader" ]] || { [[ ${#run[@]} -gt 0 ]] && ! command -v "${run[0]}" >/dev/null; }; then
    echo "FAIL: $musl_loader${run:+ and ${run[0]}} are needed to load $lib as Alpine would: run scripts/install-test-platforms" >&2
    exit 1
  fi
  # musl's loader as ldd: loads the library and binds every symbol, naming each one it cannot find.
  if ! bound=$("${run[@]}" "$musl_loader" --list "$lib" 2>&1); then
    echo "FAIL: musl's loader cannot load $lib:" >&2
    echo "$bound" >&2
    exit 1
  fi
  what="$what, and musl's loader binds all of it"
fi
echo "ok: $lib ($platform, $(du -k "$lib" | cut -f1) KiB) needs $what"

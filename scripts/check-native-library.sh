#!/usr/bin/env bash
# Checks that the native library loads on old Linux hosts: no dynamic symbol needs a glibc newer
# than 2.17, and it depends on nothing beyond libc, libm, libdl, libpthread, libgcc_s and the loader.
# Usage: scripts/check-native-library.sh <lib.so>   (exit 1 and a message naming the offender)
set -euo pipefail
lib="${1:?usage: check-native-library.sh <lib.so>}"
max_glibc=2.17
newest=$(objdump -T "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
if [[ -n "$newest" && "$(printf '%s\n%s\n' "$newest" "$max_glibc" | sort -V | tail -1)" != "$max_glibc" ]]; then
  echo "FAIL: $lib needs GLIBC_$newest (> $max_glibc) for:" >&2
  objdump -T "$lib" | grep "GLIBC_$newest" >&2
  exit 1
fi
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2)$'
while read -r needed; do
  if ! [[ "$needed" =~ $allowed ]]; then
    echo "FAIL: $lib depends on $needed, which old hosts may lack" >&2
    exit 1
  fi
done < <(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "ok: $lib needs at most GLIBC_${newest:-none} and only libc/libm/libdl/libpthread/libgcc_s/ld-linux"

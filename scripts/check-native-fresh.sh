#!/usr/bin/env bash
# With -Dnative.skip=true the shim's tests run against the native library already in DIR: fail when
# any Rust source, manifest or Cargo.lock is newer than the host's library, which would then be a
# stale one (a test passing on code that is not the code under test).
# Usage: scripts/check-native-fresh.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
library="$dir/linux-$(uname -m)/libgrantforge_kafka_jni.so"
if [[ ! -f "$library" ]]; then
    echo "check-native-fresh: no native library at $library: build it (drop -Dnative.skip)" >&2
    exit 1
fi
# the crates the library is built from (not the test server's, nor the fuzz targets')
sources=(Cargo.toml Cargo.lock crates/grantforge-engine/src crates/grantforge-engine/Cargo.toml
         crates/grantforge-kafka/src crates/grantforge-kafka/Cargo.toml
         crates/grantforge-kafka/kafka-service-type.json crates/grantforge-quotas/src
         crates/grantforge-quotas/Cargo.toml crates/grantforge-agent/src crates/grantforge-agent/Cargo.toml
         crates/grantforge-jni/src crates/grantforge-jni/Cargo.toml)
newer=$(find "${sources[@]}" -newer "$library" -type f -print -quit)
if [[ -n "$newer" ]]; then
    echo "check-native-fresh: $newer changed after $library was built: -Dnative.skip would test a stale library; build it (drop -Dnative.skip)" >&2
    exit 1
fi
echo "check-native-fresh: $library is newer than every Rust source"

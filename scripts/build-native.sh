#!/usr/bin/env bash
# Builds the agent's native library (release profile) and copies it to the directory given, which
# Maven packs into the agent JAR. Usage: scripts/build-native.sh <output-dir>
set -euo pipefail
out="${1:?usage: build-native.sh <output-dir>}"
cd "$(dirname "$0")/.."
cargo build --release --locked -p grantforge-jni
mkdir -p "$out"
cp target/release/libgrantforge_kafka_jni.so "$out/libgrantforge_kafka_jni.so"

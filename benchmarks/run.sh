#!/usr/bin/env bash
# Runs the benchmarks of docs/benchmarks.md one after the other (never in parallel: the machine has 2 cores)
# and writes JMH's JSON and logs to benchmarks/results/. Needs the agent JAR in ~/.m2 (root:
# `mvn -B -q install -DskipTests`). Stages, one per run: those below, or all (default: kafka, micro,
# layers, scale, profile, rust, report and load-stages).
#   kafka    Kafka's AuthorizerBenchmark set, StandardAuthorizer vs the agent (~35 min; 200k sets need RAM)
#   micro    cache-hit microbenchmarks on tests/fixtures/snapshots/e2e.json, 1 and 2 threads (~2 min)
#   layers   where one cached call's time goes, layer by layer (~1 min)
#   scale    one snapshot from 10k to 1M resources: load, memory, acls(ANY), both sides; plots in docs/img
#            (~8 min; the 1M forks need about 8 GB)
#   broker   Kafka's producer and consumer perf tools against three nodes of one release at once: no
#            authorizer, StandardAuthorizer, the agent; Kafka's AuthorizerBenchmark set at 0, 50k and 200k
#            resources (~60 min; GF_BROKER_ARGS passes options to BrokerThroughput, e.g. "--rounds 6")
#   broker-profile  where a broker's CPU goes with each authorizer: the same three nodes at size 0 and 200k,
#            100 B acks=1, each node's process profiled by async-profiler over the counted rounds, the agent
#            node on a build of the native library with symbols; tables by benchmarks/broker_profile.py (~25 min)
#   broker-shadow  the migration modes' cost: none, StandardAuthorizer, the agent, GrantForgeShadowAuthorizer and
#            GrantForgeHybridAuthorizer at size 0 and 50k, profiled as in broker-profile, so the shadow's comparison
#            is measured inside its own node beside StandardAuthorizer's call (~30 min; GF_SHADOW_ROUNDS=N for fewer)
#   broker-audit-topic-sink  what the audit topic sink costs a broker: nodes in server mode with the agent's sinks
#            grantforge and grantforge,topic beside one with no authorizer, the soak's traffic shape and a refusal
#            flood, rounds interleaved and rotated (~15 min; GF_AUDIT_SINK_ARGS passes options to AuditSinkCost)
#   load-stages  where one snapshot load's time and memory go (read, verify, the agent's one-pass load, then
#            the same work stage by stage: parse, compile and index, ACL view, free), on
#            SnapshotScaleBenchmark's signed file at 10k, 50k, 200k and 1M resources,
#            each size in a process of its own, three runs each (~5 min; the 1M file is 423 MB)
#   profile  JMH's gc and stack profilers on the 1-thread cache hit; perf on the native side when
#            GF_BENCH_NATIVE names a library built with symbols (see docs/benchmarks.md)
#   rust     the engine-only and agent criterion benches and the load profile (no JNI)
#   report   prints the Markdown tables from benchmarks/results/
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-all}"
jar=benchmarks/target/benchmarks.jar
out=benchmarks/results
mkdir -p "$out"

build() {
  [ -f "$jar" ] || mvn -B -q -Pbenchmarks -pl benchmarks package -DskipTests
}

# The project's version, defined once in the root pom.xml.
version=$(sed -n '0,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p' "$(dirname "$0")/../pom.xml")

machine() {
  { echo "date: $(date -u +%FT%TZ)"; echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo;
    java -version 2>&1 | head -1; echo "load: $(cut -d' ' -f1-3 /proc/loadavg)";
    sha256sum ~/.m2/repository/org/devlive/grantforge/grantforge-agent-kafka/"$version"/grantforge-agent-kafka-"$version".jar; } > "$out/$1.env"
}

jmh() {
  local name="$1"; shift
  machine "$name"
  java -jar "$jar" "$@" -rf json -rff "$out/$name.json" 2>&1 | tee "$out/$name.log"
}

case "$stage" in
  kafka|micro|layers|scale|load-stages|profile|all) build ;;
esac
case "$stage" in kafka|all) jmh kafka-set KafkaAuthorizerBenchmark ;; esac
case "$stage" in micro|all) jmh cache-hit CacheHitBenchmark ;; esac
case "$stage" in layers|all) jmh layers JniLayersBenchmark ;; esac
case "$stage" in
  scale|all)
    jmh scale SnapshotScaleBenchmark
    jmh acl-view-layers AclViewLayersBenchmark
    python3 benchmarks/plot_scale.py "$out" docs/img
    ;;
esac
case "$stage" in
  broker)
    # The integration harness starts the nodes (tests/integration/src/main/.../BrokerThroughput.java).
    mvn -B -q -pl tests/integration compile
    machine broker
    java -cp "tests/integration/target/classes:$(cat tests/integration/target/it.classpath)" \
      -Dgrantforge.it.work="$out/broker/nodes" org.devlive.grantforge.kafka.it.BrokerThroughput \
      --out "$out/broker" ${GF_BROKER_ARGS:-} 2>&1 | tee "$out/broker.log"
    ;;
esac
case "$stage" in
  broker-audit-topic-sink)
    # The test server of server mode: the grantforge sink's audit goes there.
    mvn -B -q -pl tests/integration compile
    cargo build -q --locked -p grantforge-testserver
    machine broker-audit-topic-sink
    java -cp "tests/integration/target/classes:$(cat tests/integration/target/it.classpath)" \
      -Dgrantforge.testserver="${CARGO_TARGET_DIR:-target}/debug/grantforge-testserver" -Dgrantforge.it.work="$out/broker-audit-topic-sink/nodes/kafka" \
      org.devlive.grantforge.kafka.it.AuditSinkCost --out "$out/broker-audit-topic-sink" ${GF_AUDIT_SINK_ARGS:-} 2>&1 \
      | tee "$out/broker-audit-topic-sink.log"
    ;;
esac
case "$stage" in
  broker-profile|broker-shadow)
    # Profiles name the agent's Rust frames: a build of the native library with symbols.
    mvn -B -q -pl tests/integration compile
    symbols=/tmp/gfbench/target/release/libgrantforge_kafka_jni.so
    CARGO_TARGET_DIR=/tmp/gfbench/target CARGO_PROFILE_RELEASE_STRIP=none CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
      cargo build --release --locked -p grantforge-jni
    machine "$stage"
    if [ "$stage" = broker-profile ]; then
      subjects=none,standard,agent; runs=("0 11 150000" "200000 6 40000")
    else
      rounds="${GF_SHADOW_ROUNDS:-11}"
      subjects=none,standard,agent,shadow,hybrid; runs=("0 $rounds 100000" "50000 $rounds 30000")
    fi
    dirs=()
    for run in "${runs[@]}"; do
      set -- $run
      java -cp "tests/integration/target/classes:$(cat tests/integration/target/it.classpath)" \
        -Dgrantforge.it.work="$out/$stage/nodes" org.devlive.grantforge.kafka.it.BrokerThroughput \
        --subjects "$subjects" --sizes "$1" --rounds "$2" --records "$3" --workloads w1 --profile itimer \
        --agent-native "$symbols" --out "$out/$stage/size-$1" 2>&1 | tee "$out/$stage-$1.log"
      gzip -f "$out/$stage/size-$1"/*.collapsed
      dirs+=("$out/$stage/size-$1")
    done
    python3 benchmarks/broker_profile.py "${dirs[@]}" | tee "$out/$stage/report.md"
    ;;
esac
case "$stage" in
  profile|all)
    machine profile
    java -jar "$jar" 'CacheHitBenchmark.hit_1t_(grantforge|standard)$' -prof gc 2>&1 | tee "$out/profile-gc.log"
    java -jar "$jar" 'CacheHitBenchmark.hit_1t_grantforge$' -prof stack:lines=3 2>&1 | tee "$out/profile-stack.log"
    if [ -n "${GF_BENCH_NATIVE:-}" ]; then
      # perf on the forked JVM: cpu-clock (no hardware counters in this VM), DWARF call graphs (the Rust code
      # has no frame pointers), JIT frames named through the perf map the JVM writes at exit, native frames
      # through the symbols of $GF_BENCH_NATIVE. Self time of the benchmark thread, grouped by perf_categories.py.
      for threads in 1t 2t; do
        perf record -e cpu-clock -F 999 --call-graph dwarf,8192 -o "$out/perf-$threads.data" -- java -jar "$jar" \
          "CacheHitBenchmark.hit_${threads}_grantforge\$" -wi 2 -i 2 \
          -jvmArgsAppend "-Dgf.bench.native=$GF_BENCH_NATIVE -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit" \
          > "$out/perf-$threads-run.log" 2>&1
        perf report -i "$out/perf-$threads.data" --no-children --comm org.devlive.gra --sort dso,sym --stdio -g none \
          --percentage relative 2>/dev/null | grep -v '^#' | grep -v '^$' > "$out/perf-$threads-symbols.txt"
        python3 benchmarks/perf_categories.py "$out/perf-$threads-symbols.txt" > "$out/perf-$threads-categories.txt"
        rm -f "$out/perf-$threads.data" "$out/perf-$threads.data.old"
      done
      jmh layers-symbols JniLayersBenchmark -jvmArgsAppend "-Dgf.bench.native=$GF_BENCH_NATIVE"
    fi
    ;;
esac
case "$stage" in
  rust|all)
    machine rust
    cargo bench -p grantforge-engine --bench kafka_authorizer 2>&1 | tee "$out/criterion.log"
    cargo bench -p grantforge-agent --bench hot_path 2>&1 | tee "$out/criterion-agent.log"
    cargo run --release -p grantforge-engine --example load_profile 2>&1 | tee "$out/load-profile.log"
    cargo run --release -p grantforge-engine --example load_profile -- 200000 50 2>&1 | tee -a "$out/load-profile.log"
    ;;
esac
case "$stage" in
  load-stages|all)
    machine load-stages
    cargo build -q --release -p grantforge-agent --example load_stages
    scratch=$(mktemp -d)
    : > "$out/load-stages.tsv"
    for resources in 10000 50000 200000 1000000; do
      java -cp "$jar" org.devlive.grantforge.kafka.bench.ScaleSnapshotFile "$scratch/scale.json" "$resources"
      for run in 1 2 3; do
        target/release/examples/load_stages "$scratch/scale.json" "$scratch/scale.json.pub" \
          | sed "s/^/$resources\t$run\t/" | tee -a "$out/load-stages.tsv"
      done
    done
    rm -rf "$scratch"
    ;;
esac
case "$stage" in report|all) python3 benchmarks/report.py "$out" ;; esac

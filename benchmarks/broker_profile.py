#!/usr/bin/env python3
"""Where a broker's CPU goes, per Produce request, from the profiles of `BrokerThroughput --profile itimer`.

Reads `profiles.tsv` and the collapsed stacks it names (async-profiler, one line per distinct stack: the thread as the
first frame, then the frames from the root, then the count of samples). A node's samples are scaled to its process's
CPU time over the profile (which the sampler misses a part of), then divided by the Produce requests the node counted
over the same time, so the rows are CPU microseconds per Produce request, comparable across the nodes.

Usage: python3 benchmarks/broker_profile.py DIR [DIR ...]   (prints Markdown; a profile may be gzipped, NAME.gz)
"""
import collections
import csv
import gzip
import os
import re
import sys

# Thread groups, by the name of the thread (the first frame); the first that matches.
THREADS = [
    ("request handler threads (Kafka's API layer)", r"^\[data-plane-kafka-request-handler"),
    ("network threads (sockets, SASL)", r"^\[data-plane-kafka-(network-thread|socket-acceptor)"),
    ("the agent's own threads", r"^\[grantforge-(?!it-)"),  # grantforge-it-*: the test harness's, on every node
    ("KRaft, controller and metadata", r"^\[(kafka-\d+-raft|quorum-controller|kafka-\d+-metadata|broker-\d+-to-controller|controller-)"),
    ("JIT compilers", r"^\[C[12] CompilerThre"),
    ("GC", r"^\[(G1 |GC Thread|VM Thread)"),
]
# Stacks that hold one of these frames, on any thread (inclusive time); a stack may count in several.
FRAMES = [
    ("the agent's `authorize` (shim + native)", r";org/devlive/grantforge/kafka/agent/GrantForgeKafkaAuthorizer\.authorize(;|$)"),
    ("… of which the native call (Rust)", r";org/devlive/grantforge/kafka/agent/(jni/)?NativeAgent\.authorize(;|$)"),
    ("… of which the request's encoding (Java)", r";org/devlive/grantforge/kafka/agent/(jni/)?RequestEncoder\."),
    ("StandardAuthorizer's `authorize` (in the shadow and hybrid mode too)",
     r";org/apache/kafka/metadata/authorizer/StandardAuthorizer\.authorize(;|$)"),
    # ComparingAuthorizer holds the shadow's and hybrid mode's `authorize` (GrantForgeShadowAuthorizer did before)
    ("the shadow's or hybrid mode's `authorize`",
     r";org/devlive/grantforge/kafka/agent/(GrantForgeShadowAuthorizer|ComparingAuthorizer)\.authorize(;|$)"),
    ("… of which the comparison (shim + native)",
     r";org/devlive/grantforge/kafka/agent/(GrantForgeShadowAuthorizer|ComparingAuthorizer)\.compared(;|$)"),
    ("… … of which the native call (Rust)", r";org/devlive/grantforge/kafka/agent/jni/NativeAgent\.compare(;|$)"),
    ("… of which hybrid mode's native call (Rust)", r";org/devlive/grantforge/kafka/agent/jni/NativeAgent\.hybrid(;|$)"),
    ("any frame of the agent (incl. its threads and log drain)",
     r"org/devlive/grantforge/kafka/agent/|libgrantforge_kafka_jni|Java_org_devlive_grantforge|^\[grantforge-(?!it-)"),
    ("Kafka's `AuthHelper` (the call site of every authorizer)", r";kafka/server/AuthHelper\."),
    ("`KafkaApis.handleProduceRequest`", r";kafka/server/KafkaApis\.handleProduceRequest(;|$)"),
]


def read_stacks(path):
    stacks = []
    # The profiles kept in benchmarks/results/ are gzipped.
    opener = (lambda: open(path, encoding="utf-8", errors="replace")) if os.path.exists(path) else (
        lambda: gzip.open(path + ".gz", "rt", encoding="utf-8", errors="replace"))
    with opener() as f:
        for line in f:
            line = line.rstrip("\n")
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                stacks.append((stack, int(count)))
    return stacks


def node_rows(directory, row):
    stacks = read_stacks(os.path.join(directory, row["profile"]))
    samples = sum(c for _, c in stacks)
    requests = float(row["produce_requests"])
    # CPU µs per Produce request of `n` samples, the samples scaled to the process's measured CPU time.
    per_request = lambda n: n / samples * float(row["cpu_ms"]) * 1000 / requests if samples and requests else float("nan")
    threads = collections.Counter()
    for stack, count in stacks:
        thread = stack.split(";", 1)[0]
        group = next((name for name, rx in THREADS if re.search(rx, thread)), "other threads")
        threads[group] += count
    frames = {name: sum(c for s, c in stacks if re.search(rx, s)) for name, rx in FRAMES}
    return samples, requests, float(row["cpu_ms"]), per_request, threads, frames


def main(directories):
    for directory in directories:
        with open(os.path.join(directory, "profiles.tsv"), encoding="utf-8") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        for size in dict.fromkeys(r["size"] for r in rows):
            nodes = [(r["node"], node_rows(directory, r)) for r in rows if r["size"] == size]
            names = [n for n, _ in nodes]
            print(f"\n{directory}, data {size}: CPU µs per Produce request (share of the node's samples)\n")
            print("| | " + " | ".join(names) + " |")
            print("|---|" + "---:|" * len(names))
            print("| process CPU over the profile, per request | "
                  + " | ".join(f"{cpu * 1000 / req:.1f}" for _, (s, req, cpu, *_r) in nodes) + " |")
            print("| samples / Produce requests | " + " | ".join(f"{s} / {req:.0f}" for _, (s, req, *_r) in nodes) + " |")
            groups = [g for g, _ in THREADS] + ["other threads"]
            for group in groups:
                print(f"| {group} | " + " | ".join(
                    f"{per(t[group]):.1f} ({100 * t[group] / s:.1f} %)" for _, (s, _q, _c, per, t, _f) in nodes) + " |")
            for name, _ in FRAMES:
                print(f"| {name} | " + " | ".join(
                    f"{per(fr[name]):.2f} ({100 * fr[name] / s:.2f} %)" for _, (s, _q, _c, per, _t, fr) in nodes) + " |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["benchmarks/results/broker-profile"])

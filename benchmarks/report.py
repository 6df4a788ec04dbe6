#!/usr/bin/env python3
"""Turns the JMH result files of benchmarks/run.sh into the Markdown tables of docs/benchmarks.md.

Usage: python3 benchmarks/report.py benchmarks/results   (prints Markdown to standard output)

Every score is JMH's AverageTime score (mean time per call and thread) with its 99.9 % error; "median" is the
median of the measurement iterations' scores. Ratios are StandardAuthorizer's score over the agent's (how many
times faster the agent is; below 1 means slower).
"""
import json
import os
import re
import statistics
import sys


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)


def short(name):
    return name.rsplit(".", 1)[-1]


def median(result):
    raw = [x for fork in result["primaryMetric"]["rawData"] for x in fork]
    return statistics.median(raw)


def unit(ns):
    if ns < 10_000:
        return 1, "ns", 0
    if ns < 10_000_000:
        return 1e3, "µs", 1
    return 1e6, "ms", 1


def fmt(ns, like=None):
    """ns -> text in a readable unit (the unit of `like` when given)."""
    if ns is None:
        return "–"
    div, name, digits = unit(ns if like is None else like)
    return f"{ns / div:,.{digits}f} {name}"


def cell(result):
    if result is None:
        return "–"
    m = result["primaryMetric"]
    err = m["scoreError"]
    score = m["score"]
    err_text = "" if err != err else f" ± {fmt(err, score).split(' ')[0]}"  # NaN when one iteration
    return f"{fmt(score)}{err_text} (median {fmt(median(result))})"


def ratio(anchor, ours):
    if anchor is None or ours is None:
        return "–"
    r = median(anchor) / median(ours)
    return f"{r:,.0f}×" if r >= 10 else f"{r:,.1f}×"


def index(results):
    out = {}
    for r in results:
        p = r.get("params", {})
        key = (short(r["benchmark"]), int(p.get("resourceCount", 0)), int(p.get("aclCount", 0)))
        out[key] = r
    return out


def kafka_set(results, loads):
    ix = index(results)
    sets = sorted({(k[1], k[2]) for k in ix if k[1]})
    print("### testAuthorizer: WRITE Topic foo-bar35_resource-95, User:test-user from 127.0.0.1 (DENIED)\n")
    print("| resources | ACLs/resource | StandardAuthorizer | agent, cache off (uncached) | ratio | agent, cache hit | ratio | agent, cache hit, unaudited |")
    print("|---:|---:|---|---|---:|---|---:|---|")
    for rc, ac in sets:
        s = ix.get(("authorize_standard", rc, ac))
        u = ix.get(("authorize_grantforge_uncached", rc, ac))
        c = ix.get(("authorize_grantforge_cached", rc, ac))
        q = ix.get(("authorize_grantforge_cached_unaudited", rc, ac))
        print(f"| {rc:,} | {ac} | {cell(s)} | {cell(u)} | {ratio(s, u)} | {cell(c)} | {ratio(s, c)} | {cell(q)} |")
    print()
    print("### testAuthorizeByResourceType: READ on some TOPIC, User:test-user from 127.0.0.2 (ALLOWED)\n")
    print("| resources | ACLs/resource | StandardAuthorizer (Kafka's default method) | agent (index) | ratio |")
    print("|---:|---:|---|---|---:|")
    for rc, ac in sets:
        s = ix.get(("byResourceType_standard", rc, ac))
        g = ix.get(("byResourceType_grantforge", rc, ac))
        print(f"| {rc:,} | {ac} | {cell(s)} | {cell(g)} | {ratio(s, g)} |")
    print()
    if loads:
        print("### Set-up of each side (one fork each; printed by the benchmarks' @Setup)\n")
        print("| resources | ACLs/resource | Standard: ACLs | Standard: addAcl + completeInitialLoad | Standard: heap retained | agent: snapshot | agent: configure (read, parse, index, ACL view) | agent: RSS growth |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for rc, ac in sets:
            st = loads.get(("standard", rc, ac))
            gf = loads.get(("grantforge", rc, ac))
            st_cells = (f"{int(st['entries']):,}", f"{int(st['millis']):,} ms", f"{int(st['heapMiB']):,} MiB") if st else ("–",) * 3
            gf_cells = (f"{int(gf['snapshotBytes']) / 2**20:,.0f} MiB", f"{int(gf['millis']):,} ms",
                        f"{int(gf['rssAfterMiB']) - int(gf['rssBeforeMiB']):,} MiB") if gf else ("–",) * 3
            print(f"| {rc:,} | {ac} | " + " | ".join(st_cells + gf_cells) + " |")
        print()


def parse_loads(log_path):
    loads = {}
    if not os.path.exists(log_path):
        return loads
    with open(log_path) as f:
        for line in f:
            if "GF-BENCH load" not in line:
                continue
            fields = dict(re.findall(r"(\w+)=(\S+)", line))
            key = (fields["side"], int(fields["resources"]), int(fields["acls"]))
            # keep the first (the uncached fork for the agent; the forks agree within noise)
            loads.setdefault(key, fields)
    return loads


def micro(results):
    ix = {short(r["benchmark"]): r for r in results}
    rows = [
        ("1 thread", "hit_1t_grantforge", "hit_1t_standard", 150),
        ("2 threads", "hit_2t_grantforge", "hit_2t_standard", 300),
    ]
    print("### Cache hit on a small policy set: authorize(User:alice WRITE Topic orders) → ALLOWED\n")
    print("| threads | agent (audited, as Produce asks) | StandardAuthorizer | ratio | target (agent median) | result |")
    print("|---|---|---|---:|---:|---|")
    for label, ours, anchor, target in rows:
        o, a = ix.get(ours), ix.get(anchor)
        verdict = "–" if o is None else ("PASS" if median(o) <= target else "FAIL")
        print(f"| {label} | {cell(o)} | {cell(a)} | {ratio(a, o)} | ≤ {target} ns | {verdict} |")
    print()
    print("Diagnostics (agent only):\n")
    print("| variant | time per call |")
    print("|---|---|")
    for name, label in [
        ("hit_1t_grantforge_unaudited", "cache hit, 1 thread, logIfAllowed/logIfDenied false (no audit)"),
        ("hit_2t_grantforge_unaudited", "cache hit, 2 threads, no audit"),
        ("miss_1t_grantforge_uncached", "cache off (decided every call), 1 thread, audited"),
    ]:
        print(f"| {label} | {cell(ix.get(name))} |")
    print()


def layers(results, title):
    if not results:
        return
    ix = {short(r["benchmark"]): r for r in results}
    print(f"### {title}\n")
    print("| layer | time per call |")
    print("|---|---|")
    for name, label in [
        ("crossing", "a crossing through jni-rs's guards (`NativeAgent.generation`: with_env + handle check + atomic load; the request path no longer pays these)"),
        ("encode", "Java: encode the request into the direct buffer, context unchanged since the previous call (no crossing)"),
        ("results", "Java: result list from the bitmask (no crossing)"),
        ("nativeAuthorize_unaudited", "primitive-only crossing + Rust for a pre-encoded request, no audit"),
        ("nativeAuthorize", "primitive-only crossing + Rust for a pre-encoded request, audited (logIfAllowed)"),
        ("full", "`GrantForgeKafkaAuthorizer.authorize` (everything)"),
    ]:
        print(f"| {label} | {cell(ix.get(name))} |")
    print()


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results"
    kafka_set(load(os.path.join(d, "kafka-set.json")), parse_loads(os.path.join(d, "kafka-set.log")))
    micro(load(os.path.join(d, "cache-hit.json")))
    layers(load(os.path.join(d, "layers.json")), "Layers of one cached call (shipped library)")
    layers(load(os.path.join(d, "layers-symbols.json")), "Layers of one cached call (symbol build of the working tree, used for the perf profile)")


if __name__ == "__main__":
    main()

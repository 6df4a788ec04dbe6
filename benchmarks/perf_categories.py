#!/usr/bin/env python3
"""Groups a `perf report --no-children --sort dso,sym -g none --percentage relative` listing of the benchmark
thread into the cost centres of one authorize() call (see benchmarks/run.sh, stage profile).

Usage: python3 benchmarks/perf_categories.py perf-1t-symbols.txt
"""
import re,sys
cats=[("decode of the request in Rust (codec, context memo, from_utf8)", r"codec::|from_utf8|Reader::"),
("the lane: thread-locals, spin lock, snapshot check (LocalKey::with inlines them)", r"LocalKey|lane::|__tls_get_addr|with_mine|with_deciding"),
("question key: packing, hashing, front look-up, compares", r"hashbrown|KeyWriter|KeyHasher|keys::|DecisionCache::pack|memcmp|bcmp|Equivalent|hash_of"),
("clock reads (coarse clocks)", r"clock_gettime|vdso|Timespec|SystemTime|Instant|time::|clock::"),
("copies and allocation", r"_int_free|malloc|_int_malloc|cfree|calloc|__rust_alloc|__rust_dealloc|__rdl_|__rust_no_alloc|try_allocate_in|memmove|memcpy|realloc|drop_in_place|memset"),
("the native entry and the rest of the agent (authorize, audit fold, counts)", r"Java_org|grantforge_agent::|grantforge_kafka::|grantforge_engine::|parking_lot|FnOnce::call_once"),
("Java (JIT-compiled shim incl. encoding, JNI stub, JMH loop)", r"org\.devlive|java\.|jdk\.|org\.openjdk|Interpreter|StubRoutines|\[unknown\]"),
("jni-rs guards + JNI calls back into the JVM (none on the request path now)", r"jni::|jni_|AttachGuard|EnvUnowned|EnvOutcome|ThreadInVMfromNative|JNIHandles|JavaThread::"),
]
tot={c:0.0 for c,_ in cats}; top={c:[] for c,_ in cats}; other=[]
for line in open(sys.argv[1]):
    if '[.]' not in line and '[k]' not in line: continue
    pct=float(line.split('%')[0]); s=line.split('%',1)[1].strip()
    sym=re.split(r'\[[.k]\]',s,1)[-1].strip()
    for c,rx in cats:
        if re.search(rx,sym): tot[c]+=pct; top[c].append((pct,sym)); break
    else: other.append((pct,sym))
for c,_ in cats:
    print(f"{tot[c]:5.1f}%  {c}")
    for p,s in sorted(top[c],reverse=True)[:3]: print(f"         {p:5.2f}% {s[:100]}")
print(f"{sum(p for p,_ in other):5.1f}%  other (kernel, JVM runtime)")
for p,s in sorted(other,reverse=True)[:3]: print(f"         {p:5.2f}% {s[:100]}")

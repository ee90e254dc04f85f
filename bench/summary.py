"""Medians per label of bench/results.jsonl, and our figures against the baseline's."""
import json, statistics, sys
from collections import defaultdict

runs = defaultdict(list)
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        runs[r["label"]].append(r)

def med(label, key):
    vals = [r[key] for r in runs[label] if r.get(key) is not None]
    return statistics.median(vals) if vals else None

print(f"{'scenario':<12} {'metric':<26} {'mcp-go':>10} {'mcp-tools':>10} {'ratio':>7}")
for sc in ["stdio-k1", "stdio-k64", "http-c8"]:
    base, ours = "mcpgo|" + sc, "mcptools|" + sc
    for key in ["calls_per_s", "p99_us", "server_cpu_us_per_call", "startup_ms", "idle_rss_kb", "idle_anon_kb", "peak_rss_kb"]:
        b, o = med(base, key), med(ours, key)
        if b is None or o is None:
            continue
        ratio = f"{o / b:.2f}x" if b else "-"
        print(f"{sc:<12} {key:<26} {b:>10.1f} {o:>10.1f} {ratio:>7}")
    bad = sum(r["errors"] + r["missing"] + r["duplicates"] + r["mismatches"] for r in runs[ours] + runs[base])
    print(f"{sc:<12} {'lost/dup/failed calls':<26} {bad:>21}")

#!/usr/bin/env bash
# Whole-process benchmarks with the project's harness (bench/mcpbench): bare
# mcp-go echo against `mcp-tools serve --builtins echo`, alternating, RUNS
# times each, one JSON line per run in bench/results.jsonl. Summarise with
# bench/summary.py. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
N=${N:-20000}
mkdir -p bin
# Static, pure-Go builds on both sides, as the README's install command makes
# (CGO_ENABLED=0: no libc mapped, 1.1-1.3 MiB less idle memory on each side).
# CGO_ENABLED=1 bash bench/run.sh measures cgo builds instead.
export CGO_ENABLED=${CGO_ENABLED:-0}
# The harness (bench/mcpbench) and the bare mcp-go baseline (bench/mcpgo-echo)
# live in this repository, in their own module: nothing outside it is needed.
go -C bench build -o "$PWD/bin/mcpbench" ./mcpbench
go -C bench build -o "$PWD/bin/mcpgo-echo" ./mcpgo-echo
# The default (embedded) build, as `go install` makes it; TAGS=service bash
# bench/run.sh measures the service build instead (go-redis and the
# OpenTelemetry SDK linked, state still in memory).
go build -tags "${TAGS:-}" -o bin/mcp-tools ./cmd/mcp-tools
out=bench/results.jsonl
: > "$out"
args=(-tool echo -args '{"text":"hello"}')
for i in $(seq "$RUNS"); do
  bin/mcpbench -label "mcpgo|stdio-k1" -n "$N" -k 1 "${args[@]}" -- bin/mcpgo-echo >> "$out"
  bin/mcpbench -label "mcptools|stdio-k1" -n "$N" -k 1 "${args[@]}" -- bin/mcp-tools serve --builtins echo --log-level warn >> "$out"
  bin/mcpbench -label "mcpgo|stdio-k64" -n "$N" -k 64 "${args[@]}" -- bin/mcpgo-echo >> "$out"
  bin/mcpbench -label "mcptools|stdio-k64" -n "$N" -k 64 "${args[@]}" -- bin/mcp-tools serve --builtins echo --log-level warn >> "$out"
  bin/mcpbench -label "mcpgo|http-c8" -url http://127.0.0.1:18081/mcp -c 8 -n "$N" "${args[@]}" -- bin/mcpgo-echo -http 127.0.0.1:18081 >> "$out"
  bin/mcpbench -label "mcptools|http-c8" -url http://127.0.0.1:18082/mcp -c 8 -n "$N" "${args[@]}" -- bin/mcp-tools serve --builtins echo --log-level warn --transport http --addr 127.0.0.1:18082 >> "$out"
done
python3 bench/summary.py "$out"

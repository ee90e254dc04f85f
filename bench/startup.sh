#!/usr/bin/env bash
# Start-up and idle memory of mcp-tools at one or more git revisions against
# bare mcp-go, in alternating spawns (bench/mcpbench -n 0: start, initialize,
# one call, then the idle reading), ROUNDS of each; medians per binary.
#
#   bash bench/startup.sh [REV...]     # default: HEAD
#   ROUNDS=15 bash bench/startup.sh 7fb121e HEAD
#
# Each revision is built static (CGO_ENABLED=0) from a temporary git worktree,
# so the working tree is not touched; WORKTREE builds it as it stands instead.
# Start-up and idle memory depend on the machine as much as on the binary:
# compare binaries measured in the same sitting, not figures across machines.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-15}
export CGO_ENABLED=${CGO_ENABLED:-0}
mkdir -p bin
go -C bench build -o "$PWD/bin/mcpbench" ./mcpbench
go -C bench build -o "$PWD/bin/mcpgo-echo" ./mcpgo-echo
bins=("$PWD/bin/mcpgo-echo")
labels=("bare-mcp-go")
tmp=$(mktemp -d)
trap 'for w in "$tmp"/wt-*; do [ -d "$w" ] && git worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(HEAD)
for rev in "${revs[@]}"; do
  if [ "$rev" = WORKTREE ]; then
    go build -o "$tmp/mcp-tools-worktree" ./cmd/mcp-tools
    bins+=("$tmp/mcp-tools-worktree")
  else
    short=$(git rev-parse --short "$rev")
    if [ ! -e "$tmp/mcp-tools-$short" ]; then # a revision named twice is built once
      git worktree add -q --detach "$tmp/wt-$short" "$rev"
      (cd "$tmp/wt-$short" && go build -o "$tmp/mcp-tools-$short" ./cmd/mcp-tools)
    fi
    bins+=("$tmp/mcp-tools-$short")
    rev=$short
  fi
  labels+=("$rev")
done
out="$tmp/startup.jsonl"
for _ in $(seq "$ROUNDS"); do
  for i in "${!bins[@]}"; do
    # The baseline ignores the arguments after its name.
    # One summary line on stderr per spawn, kept only to show a failure.
    if ! bin/mcpbench -label "${labels[$i]}" -n 0 -k 1 -tool echo -args '{"text":"hello"}' \
      -- "${bins[$i]}" serve --builtins echo --log-level warn 2>"$tmp/last.err" >> "$out"; then
      cat "$tmp/last.err" >&2
      exit 1
    fi
  done
done
python3 - "$out" <<'EOF'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("{"):
        r = json.loads(line)
        runs[r["label"]].append(r)
print(f"{'binary':<14} {'spawns':>6} {'start-up ms':>12} {'idle MiB':>9} {'anon MiB':>9}")
for label, rs in runs.items():
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"{label:<14} {len(rs):>6} {med('startup_ms'):>12.1f} {med('idle_rss_kb') / 1024:>9.2f} {med('idle_anon_kb') / 1024:>9.2f}")
EOF

#!/usr/bin/env bash
# A local fleet in one command: redis-server, N replicas of
# `mcp-tools serve --transport http --state redis://...` sharing it, and
# nginx in front of them (round robin, no stickiness) on 127.0.0.1:8080.
# Everything listens on loopback and lives in a temporary directory;
# Ctrl-C stops it all.
#
#   scripts/fleet-demo.sh              # 3 replicas
#   N=5 scripts/fleet-demo.sh          # 5 replicas
#   scripts/fleet-demo.sh bench        # calls/s through nginx with 1, 2 and 3 replicas
#
# Settings (environment): N (replicas, default 3), PORT (nginx, 8080),
# REDIS_PORT (6399), REPLICA_PORT (the first replica's port, 9101; the
# others follow), MCP_TOOLS_STATE_KEY (default: a random one for this run).
# bench: SESSIONS (16), DURATION (10s), REPLICAS ("1 2 3").
# Needs Go, redis-server and nginx (apt-get install redis-server nginx-light).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-demo}
case $mode in
demo | bench) ;;
*)
  echo "usage: $0 [bench]" >&2
  exit 2
  ;;
esac
N=${N:-3}
PORT=${PORT:-8080}
REDIS_PORT=${REDIS_PORT:-6399}
REPLICA_PORT=${REPLICA_PORT:-9101}
SESSIONS=${SESSIONS:-16}
DURATION=${DURATION:-10s}
REPLICAS=${REPLICAS:-1 2 3}
if [[ $mode == bench ]]; then
  N=0
  for n in $REPLICAS; do ((n > N)) && N=$n; done
fi

PATH=$PATH:/usr/sbin:/sbin
for cmd in go redis-server nginx; do
  command -v "$cmd" >/dev/null || {
    echo "$cmd is not installed (apt-get install redis-server nginx-light; Go from go.dev)" >&2
    exit 1
  }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-tools-fleet.XXXXXX")
pids=()
nginx_pid=
cleanup() {
  trap - EXIT INT TERM
  [[ -n $nginx_pid ]] && kill "$nginx_pid" 2>/dev/null
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo; echo stopping; exit 0' INT TERM

# listening PORT: whether something accepts connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# status PORT PATH: the HTTP status of GET PATH on 127.0.0.1:PORT ("" when
# nothing answers). Plain bash, so that curl is not needed.
status() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 0
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3
    read -r -t 5 line <&3 || true
    echo "${line:9:3}"
  ) 2>/dev/null
}

# wait_for WHAT CHECK...: runs CHECK every 0.1 s until it succeeds (30 s).
wait_for() {
  local what=$1
  shift
  for _ in $(seq 300); do
    "$@" && return 0
    sleep 0.1
  done
  echo "$what did not start; logs in $work" >&2
  exit 1
}
ready() { [[ $(status "$1" /readyz) == 200 ]]; }
proxying() { [[ $(status "$PORT" /healthz) == 200 ]]; }

ports=("$PORT" "$REDIS_PORT")
for ((i = 0; i < N; i++)); do ports+=($((REPLICA_PORT + i))); done
for p in "${ports[@]}"; do
  if listening "$p"; then
    echo "port $p is taken on 127.0.0.1; set PORT, REDIS_PORT or REPLICA_PORT" >&2
    exit 1
  fi
done

echo "building into $work"
go build -tags service -o "$work/mcp-tools" ./cmd/mcp-tools  # the service build: --state redis://
[[ $mode == bench ]] && go build -o "$work/fleetload" ./scripts/fleetload

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
wait_for redis-server listening "$REDIS_PORT"

export MCP_TOOLS_STATE_KEY=${MCP_TOOLS_STATE_KEY:-$(head -c 32 /dev/urandom | base64)}
args=(serve --transport http --state "redis://127.0.0.1:$REDIS_PORT/0" --builtins calculator,datetime,echo)
if [[ $mode == bench ]]; then
  args+=(--log-level warn) # one log line per call would be measured too
else
  args+=(--require-approval datetime) # an approval to answer through any replica
fi
for ((i = 0; i < N; i++)); do
  port=$((REPLICA_PORT + i))
  "$work/mcp-tools" "${args[@]}" --addr "127.0.0.1:$port" >"$work/replica$i.log" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < N; i++)); do wait_for "replica $i" ready $((REPLICA_PORT + i)); done

# start_nginx COUNT: nginx in front of the first COUNT replicas. The same
# configuration as cmd/mcp-tools/testdata/fleet/nginx.conf.tmpl.
start_nginx() {
  local dir=$work/nginx$1 user="" servers="" i
  mkdir -p "$dir"
  [[ $(id -u) == 0 ]] && user="user root;"
  for ((i = 0; i < $1; i++)); do servers+="        server 127.0.0.1:$((REPLICA_PORT + i));"$'\n'; done
  cat >"$dir/nginx.conf" <<EOF
$user
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/client_body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    upstream mcp_tools {
$servers        keepalive 32;
    }
    server {
        listen 127.0.0.1:$PORT;
        location / {
            proxy_pass http://mcp_tools;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$http_host;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }
    }
}
EOF
  nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' &
  nginx_pid=$!
  wait_for nginx proxying
}

stop_nginx() {
  kill "$nginx_pid"
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=
  for _ in $(seq 50); do listening "$PORT" || return 0; sleep 0.1; done
}

if [[ $mode == bench ]]; then
  echo "$(nproc) CPUs; each run: $SESSIONS sessions calling calculator for $DURATION through nginx"
  for n in $REPLICAS; do
    start_nginx "$n"
    printf 'replicas=%s ' "$n"
    "$work/fleetload" -url "http://127.0.0.1:$PORT/mcp" -sessions "$SESSIONS" -duration "$DURATION"
    stop_nginx
  done
  exit 0
fi

start_nginx "$N"
cat <<EOF

$N replicas behind nginx: http://127.0.0.1:$PORT/mcp
  replicas:  $(for ((i = 0; i < N; i++)); do printf 'http://127.0.0.1:%s ' $((REPLICA_PORT + i)); done)
  metrics:   http://127.0.0.1:$REPLICA_PORT/metrics (each replica has its own)
  redis:     redis://127.0.0.1:$REDIS_PORT/0
  logs:      $work (removed on exit)
Ctrl-C stops everything.
EOF
wait

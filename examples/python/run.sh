#!/usr/bin/env bash
# The host example end to end: a `serve` on a free loopback port with a temporary SQLite database, host.py against
# it, the server stopped. Exits with host.py's status.
#
#   examples/python/run.sh [PYTHON] [HOST.PY OPTIONS...]     # PYTHON defaults to python3
#
# PYTHON needs a13n_stream_rs and a13n-harness installed. The server is target/release/a13n-stream (build it with
# `cargo build --release -p a13n-stream`), or the binary named by $A13N_STREAM.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${1:-python3}"
shift || true
server="${A13N_STREAM:-$root/target/release/a13n-stream}"
[ -x "$server" ] || { echo "error: $server not found; run: cargo build --release -p a13n-stream" >&2; exit 1; }

scratch="$(mktemp -d)"
"$server" serve --listen 127.0.0.1:0 --db "$scratch/host-example.db" > "$scratch/serve.out" 2> "$scratch/serve.err" &
serve_pid=$!
cleanup() {
  kill "$serve_pid" 2>/dev/null || true
  wait "$serve_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  grep -q "listening on" "$scratch/serve.out" 2>/dev/null && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
address="$(sed -n 's/^listening on //p' "$scratch/serve.out")"
[ -n "$address" ] || { echo "error: serve did not start" >&2; cat "$scratch/serve.err" >&2; exit 1; }

status=0
"$python" "$here/host.py" --serve "$address" "$@" || status=$?
[ "$status" -eq 0 ] || { echo "host.py exited $status; the server's log:" >&2; tail -20 "$scratch/serve.err" >&2; }
exit "$status"

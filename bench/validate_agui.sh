#!/usr/bin/env bash
# Serve every corpus stream through `a13n-stream serve` and check each run's SSE output with the PyPI validator
# `ag-ui-validate` (Python 3.11 works). Prints the validator's findings per case, grouped by rule.
#
#   bench/validate_agui.sh [CASES_DIR ...]      (default: tests/cases and ../shared/conformance/cases)
#
# Needs curl and python3; installs ag-ui-validate 0.4.0 into a virtual environment under target/.
set -euo pipefail
cd "$(dirname "$0")/.."
roots=("$@")
if [ ${#roots[@]} -eq 0 ]; then
  roots=(tests/cases)
  [ -d ../shared/conformance/cases ] && roots+=(../shared/conformance/cases)
fi
venv=target/agui-validate-venv
[ -x "$venv/bin/ag-ui-validate" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q ag-ui-validate==0.4.0; }
cargo build --release -q -p a13n-stream
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
./target/release/a13n-stream serve --listen 127.0.0.1:0 --db "$work/host.db" > "$work/server.out" 2>/dev/null &
server=$!
for _ in $(seq 100); do grep -q "listening on" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
address=$(sed -n 's/^listening on //p' "$work/server.out" | head -1)
[ -n "$address" ] || { echo "the server did not start" >&2; exit 1; }

clean=0
total=0
for root in "${roots[@]}"; do
  for case in "$root"/*/; do
    [ -f "$case/source.jsonl" ] || continue
    name=$(basename "$case")
    # One line per request at the journal's end; a refused line is not stored, so the next one takes its offset.
    # Cases share Harness run ids, so each is hosted under its own name.
    run=$(python3 - "$case/source.jsonl" "$address" "$(basename "$root")-$name" <<'PY'
import re, sys, urllib.request, urllib.error
path, address, run = sys.argv[1], sys.argv[2], re.sub(r"[^A-Za-z0-9_.:-]", "-", sys.argv[3])
lines = [line for line in open(path, encoding="utf-8").read().splitlines() if line.strip()]
offset = 0
for line in lines:
    request = urllib.request.Request(f"{address}/v1/runs/{run}/source?offset={offset}", data=(line + "\n").encode(), method="POST")
    try:
        urllib.request.urlopen(request).read()
        offset += 1
    except urllib.error.HTTPError as error:
        if error.code != 422:
            raise
print(run)
PY
)
    # Streams without a terminal result stay open: take what is stored.
    curl -sN --max-time 3 "$address/v1/runs/$run/events" > "$work/$name.sse" || true
    total=$((total + 1))
    if report=$("$venv/bin/ag-ui-validate" "$work/$name.sse" --group --no-color 2>&1); then
      clean=$((clean + 1))
    else
      echo "== $name"
      echo "$report" | grep -E "AGUI[0-9]+" || echo "$report"
    fi
  done
done
echo "$clean of $total runs without error-level findings"

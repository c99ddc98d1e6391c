#!/usr/bin/env bash
# Seed the fuzz corpora from the conformance cases (the shared corpus when present, and tests/cases).
set -euo pipefail
cd "$(dirname "$0")"
roots=(../tests/cases)
[ -d ../../shared/conformance/cases ] && roots+=(../../shared/conformance/cases)
mkdir -p corpus/source_line corpus/agui_line corpus/checkpoint corpus/fragments corpus/recovery_laws
for root in "${roots[@]}"; do
  for case in "$root"/*/; do
    name=$(basename "$case")
    if [ -f "$case/source.jsonl" ]; then
      head -c 60000 "$case/source.jsonl" > "corpus/source_line/$name"
      for cut in "$case"/cuts/*.display.json; do
        [ -f "$cut" ] || continue
        { head -c 50000 "$cut"; echo; head -n 5 "$case/source.jsonl"; } > "corpus/checkpoint/$name-$(basename "$cut")"
      done
    fi
    if [ -f "$case/events.jsonl" ]; then
      head -c 60000 "$case/events.jsonl" > "corpus/agui_line/$name"
    fi
    if [ -f "$case/agui.jsonl" ]; then
      python3 -c 'import json,sys
for line in open(sys.argv[1]):
    for e in json.loads(line).get("events", []): print(json.dumps(e, ensure_ascii=False, separators=(",", ":")))' "$case/agui.jsonl" 2>/dev/null | head -c 60000 > "corpus/agui_line/$name-agui" || true
    fi
  done
done
echo "seeded: $(ls corpus/source_line | wc -l) source, $(ls corpus/agui_line | wc -l) agui, $(ls corpus/checkpoint | wc -l) checkpoint inputs"

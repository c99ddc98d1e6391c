#!/usr/bin/env bash
# Seed the fuzz corpora from the conformance cases (the shared corpus when present, and tests/cases).
set -euo pipefail
cd "$(dirname "$0")"
roots=(../tests/cases)
[ -d ../../shared/conformance/cases ] && roots+=(../../shared/conformance/cases)
mkdir -p corpus/source_line corpus/agui_line corpus/checkpoint corpus/fragments corpus/recovery_laws corpus/fold_lanes
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
# Content deltas of the parts the fold_lanes target opens (text at index 0, thinking at index 1), plain and odd.
python3 - <<'PY'
import json
def line(seq, index, kind, content, **extra):
    delta = {"content_delta": content, "provider_name": None, "provider_details": None, "part_delta_kind": kind}
    if kind == "text":
        delta["citations_delta"] = None
    else:
        delta["signature_delta"] = None
    delta.update(extra)
    event = {"index": index, "delta": delta, "event_kind": "part_delta"}
    return json.dumps({"thread_id": "t", "run_id": "r", "sequence": seq, "occurred_at": f"2026-11-29T12:00:{seq:02d}.25+02:00", "event": event}, ensure_ascii=False, separators=(",", ":"))
def text_input(seq, source, content, metadata):
    event = {"kind": "a13n.input.text", "capability_id": "a13n.input", "tool_call_id": None, "tool_name": None,
             "event_kind": "capability", "input_id": f"input-{seq}", "source": source, "content": content,
             "metadata": metadata}
    return json.dumps({"thread_id": "t", "run_id": "r", "sequence": seq, "occurred_at": f"2026-11-29T12:00:{seq:02d}Z", "event": event}, ensure_ascii=False, separators=(",", ":"))
seeds = {
    "plain": [line(4, 0, "text", "Hello "), line(5, 0, "text", "world"), line(6, 1, "thinking", "hmm")],
    "inputs": [
        text_input(6, "user", "Hello \u00e9 \"q\"\n", {"display": True, "source_id": None, "media": False}),
        text_input(7, "context", "mounts:\n{}", {"display": False, "source_id": "a13n.environment-mounts", "media": False, "n": [1]}),
        text_input(8, "steering", "stop", None),
    ],
    "escapes": [line(4, 0, "text", "a\n\"b\" \u00e9 \U0001F680 \t")],
    "signature": [line(4, 1, "thinking", "x", signature_delta="sig")],
    "end": [line(4, 0, "text", "x"), json.dumps({"thread_id": "t", "run_id": "r", "sequence": 5, "occurred_at": "2026-11-29T12:00:05Z", "event": {"index": 0, "part": {"content": "x", "part_kind": "text"}, "event_kind": "part_end"}}), line(6, 0, "text", "again")],
}
def relaid(text, unknown):
    item = json.loads(text)
    if unknown:
        item["event"]["x_unknown"] = {"n": [1, 2], "s": "a"}
    return json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
for name, lines in seeds.items():
    with open(f"corpus/fold_lanes/{name}", "w") as f:
        f.write("\n".join(lines) + "\n")
    # The same lines in another layout (keys sorted, and an unknown key the event's model drops), each twice, so
    # that the lanes lay them out and the second of a shape is laid out by the first's (laid_out_memo.rs).
    for unknown in (False, True):
        with open(f"corpus/fold_lanes/{name}-sorted{'-unknown' if unknown else ''}", "w") as f:
            f.write("".join(relaid(line, unknown) + "\n" for line in lines for _ in range(2)))
PY
echo "seeded: $(ls corpus/source_line | wc -l) source, $(ls corpus/agui_line | wc -l) agui, $(ls corpus/checkpoint | wc -l) checkpoint inputs"

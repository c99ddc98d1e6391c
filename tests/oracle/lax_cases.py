"""Record the reference on journal lines whose scalar fields are spelled as Pydantic's lax mode reads them.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/lax_cases.py tests/cases [SEED]

A host loads a journal line's event into its model with Pydantic, in lax mode: a field declared `int` holds 3
whether the line says `3`, `3.0`, `"3"` or `" +3 "`, a `bool` field holds `True` for `"yes"`, `1` or `"t"`, and a
`float` field holds `2.0` for `2`. The reference then reads and dumps the field as it holds it (a part's `index`
names its ids; a carried event is copied from its dump). For each corpus stream named below this writes a case whose
`source.jsonl` is that stream with every such field of its Pydantic AI events re-spelled (a seeded choice per
field; keys of the same name in free-form values too, which the reference carries as written), recorded with the
shared oracle's own `record()` on the native objects the lines load into; and a short run whose integers given as
text are past 128 bits (a part's index, a retry's attempt, a shell's exit code), which Python's `int` holds.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import CORPUS, record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD, RUN  # noqa: E402  (a journal line's head, and a short run's opening)

STREAMS = ["real-tools", "real-chat-thinking", "real-multimodal", "mode-full-content-obs", "real-tools-retry"]
# The `int`, `bool` and `float` fields of the Pydantic AI models (tests/oracle/source_models.py names them).
INTS = {"index", "start", "end", "interrupted_at_ms", "attempt", "max_retries", "content_index", "exit_code",
        "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens",
        "unmeasured_requests", "output_reasoning_tokens", "input_audio_tokens", "cache_audio_read_tokens",
        "output_audio_tokens"}
BOOLS = {"args_valid", "force_download", "dynamic", "display", "media", "recoverable", "state_restored", "callback"}
FLOATS = {"audio_seconds"}


def lax_int(value: int, rng: random.Random) -> Any:
    spellings: list[Any] = [str(value), float(value), f" +{value} " if value >= 0 else f" {value} ", f"{value}.00"]
    if value in (0, 1):
        spellings.append(bool(value))
    return rng.choice(spellings)


def lax_bool(value: bool, rng: random.Random) -> Any:
    return rng.choice([int(value), float(value), "yes" if value else "no", "TRUE" if value else "off",
                       "t" if value else "f", "1" if value else "0"])


def respell(holder: Any, rng: random.Random) -> None:
    if isinstance(holder, list):
        for child in holder:
            respell(child, rng)
    if not isinstance(holder, dict):
        return
    for key, value in list(holder.items()):
        if key in BOOLS and isinstance(value, bool):
            holder[key] = lax_bool(value, rng)
        elif key in INTS and isinstance(value, int) and not isinstance(value, bool):
            holder[key] = lax_int(value, rng)
        elif key in FLOATS and isinstance(value, float) and value.is_integer():
            holder[key] = int(value)
        else:
            respell(value, rng)


def spell(line: str, rng: random.Random) -> str:
    item = json.loads(line)
    event = item.get("event")
    # An extension event's payload is free-form: the Harness's model reads it as written.
    if isinstance(event, dict) and "event_kind" in event:
        respell(event, rng)
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def beyond_128_bits() -> list[str]:
    """A short run whose integer fields are given as text holding integers past 128 bits (found by helper-66)."""
    big = 2**127
    text = {"content": "hi", "part_kind": "text"}
    events = [
        {"index": f" +000{big}.00 ", "part": text, "event_kind": "part_start"},
        {"index": f"{big}", "delta": {"content_delta": "!", "part_delta_kind": "text"}, "event_kind": "part_delta"},
        {"index": f"{big:_}", "part": dict(text, content="hi!"), "event_kind": "part_end"},
        {"part": {"tool_name": "flaky", "content": "x", "tool_call_id": "c", "timestamp": "2026-11-29T18:05:39.949320Z",
                  "outcome": "retried", "retry": {"cause": "model_retry", "attempt": f"{big * 3}", "max_retries": 5},
                  "part_kind": "tool-return"}, "event_kind": "function_tool_result"},
        {"kind": "a13n.shell.status", "event_kind": "capability", "process_id": "p", "phase": "exited",
         "exit_code": f"-{big * 5}"},
    ]
    result = ('"result":{"status":"completed","output":"hi","usage":{"input_tokens":1,"output_tokens":2,'
              '"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}')
    bodies = RUN[:2] + ['"event":' + json.dumps(event, separators=(",", ":")) for event in events] + [result]
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    out = Path(sys.argv[1])
    record_lines(out / "lax-scalars-beyond-128-bits", beyond_128_bits())
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261207)
    for name in STREAMS:
        lines = [line for line in (CORPUS / name / "source.jsonl").read_text().split("\n") if line]
        case = out / f"lax-scalars-{name}"
        print("case", case.name, file=sys.stderr)
        record_lines(case, [spell(line, rng) for line in lines])


if __name__ == "__main__":
    main()

"""Record the reference on journal lines whose events its models read otherwise than as spelled.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/model_cases.py tests/cases

A host loads a journal line's event into its Pydantic AI model, which reads a field under an alias (a tool
availability change's `tools_added` given as `added`), drops the keys a typed dict does not declare (a tool-search
call's `args`, a capability load's `args`, a tool search's result and its matches), reads a date alone as its
midnight (a tool return's `timestamp`), reads a content's bytes from base64 in either alphabet, padded or not, and
computes a content's `identifier` when none or an empty one is given (from its bytes or its URL); the reference
dumps what the model holds. Two short runs hold them, some keys reversed; their output is recorded by the shared
oracle's `record()` on the native objects the lines load into. Found by helper-65's sweep.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD, RUN  # noqa: E402  (a journal line's head, and a short run's opening)

RESULT = ('"result":{"status":"completed","output":"hi","usage":{"input_tokens":1,"output_tokens":2,'
          '"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}')
TS = "2026-01-01T00:00:00Z"


def boundaries(index: int, part: dict) -> list[dict]:
    return [{"index": index, "part": part, "event_kind": kind} for kind in ("part_start", "part_end")]


def events() -> list[dict]:
    native_search = {"tool_name": "tool_search", "args": {"limit": 3, "queries": ["a"]}, "tool_call_id": "ts1",
                     "tool_kind": "tool-search", "provider_name": "openai", "part_kind": "builtin-tool-call"}
    native_return = {"tool_name": "tool_search", "tool_call_id": "ts1", "tool_kind": "tool-search",
                     "content": {"message": "m", "discovered_tools": [{"score": 1, "name": "x"}], "extra": 2},
                     "timestamp": "2026-01-02", "provider_name": "openai", "part_kind": "builtin-tool-return"}
    load = {"tool_name": "load_capability", "args": {"x": 1, "id": "cap"}, "tool_call_id": "lc1",
            "tool_kind": "capability-load", "part_kind": "tool-call"}
    local_search = {"part_kind": "tool-call", "tool_kind": "tool-search", "tool_call_id": "st1",
                    "args": {"k": 1, "queries": ["q"]}, "tool_name": "search_tools"}
    return [
        {"part": {"added": ["x", "y"], "tool_call_id": "c", "part_kind": "tool-availability-delta"},
         "event_kind": "tool_availability_delta"},
        {"event_kind": "tool_availability_delta",
         "part": {"part_kind": "tool-availability-delta", "added": ["ignored"], "tools_added": ["z"]}},
        *boundaries(0, native_search), *boundaries(1, native_return), *boundaries(2, load),
        *boundaries(3, local_search),
        {"part": {"tool_name": "t", "content": "x", "tool_call_id": "c", "timestamp": "2026-01-03",
                  "outcome": "failed", "part_kind": "tool-return"}, "event_kind": "function_tool_result"},
    ]


def contents() -> list[dict]:
    file = {"content": {"data": "aGVsbG/7/w", "media_type": "image/png", "kind": "binary"}, "part_kind": "file"}
    named = {"content": {"kind": "binary", "identifier": "", "media_type": "image/png", "data": "-_8"}, "part_kind": "file"}
    speech = {"speaker": "assistant", "transcript": "hi", "part_kind": "speech",
              "audio": {"data": "+/8=", "media_type": "audio/wav", "kind": "binary", "identifier": None}}
    media = {"kind": "a13n.input.media", "event_kind": "capability", "input_id": "i", "source": "user",
             "content": {"kind": "image-url", "url": "https://example.com/a.png"}}
    return [*boundaries(0, file), *boundaries(1, named), *boundaries(2, speech), media]


def journal(events: list[dict]) -> list[str]:
    bodies = RUN[:2] + ['"event":' + json.dumps(event, separators=(",", ":")) for event in events] + [RESULT]
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    record_lines(Path(sys.argv[1]) / "model-aliases-typed-dicts-dates", journal(events()))
    record_lines(Path(sys.argv[1]) / "model-binary-content", journal(contents()))


if __name__ == "__main__":
    main()

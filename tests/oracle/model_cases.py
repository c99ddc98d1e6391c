"""Record the reference on journal lines whose events its models read otherwise than as spelled.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/model_cases.py tests/cases

A host loads a journal line's event into its Pydantic AI model, which reads a field under an alias (a tool
availability change's `tools_added` given as `added`), drops the keys a typed dict does not declare (a tool-search
call's `args`, a capability load's `args`, a tool search's result and its matches), reads a date alone as its
midnight (a tool return's `timestamp`) and a number, or text holding one, as a Unix time, reads a content's bytes
from base64 in either alphabet, padded or not, and computes a content's `identifier` when none or an empty one is
given (from its bytes or its URL); the reference dumps what the model holds. Three short runs hold them, some keys
reversed; their output is recorded by the shared oracle's `record()` on the native objects the lines load into.
Found by helper-65's sweep (Unix times: session 46).
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


# A built-in tool's return and a failed tool result (which the carried lane takes) in their models' layout, the time
# left to fill: the first line of each is remembered by the layout memo, so the ones after it with a Unix time in
# that place test the memo's check as well as the general path. Both events are carried whole, in CUSTOM events.
RETURN_IN_LAYOUT = ('{"index":%d,"part":{"tool_name":"web_search","content":"r","tool_call_id":"w%d","tool_kind":null,'
                    '"metadata":null,"timestamp":%s,"outcome":"success","provider_name":null,"provider_details":null,'
                    '"part_kind":"builtin-tool-return"},"previous_part_kind":null,"event_kind":"part_start"}')
RESULT_IN_LAYOUT = ('{"part":{"tool_name":"f","content":"ok","tool_call_id":"c%d","tool_kind":null,"metadata":null,'
                    '"timestamp":%s,"outcome":"failed","retry":null,"part_kind":"tool-return"},"content":null,'
                    '"event_kind":"function_tool_result"}')
# Unix times Pydantic reads (seconds, milliseconds past 2e10, fractions rounding up to the next second, negative
# times, text of an integer or a decimal), after the ISO text the memo remembers first.
UNIX_TIMES = ['"2026-01-01T00:00:00Z"', "1764439540", "1764439540.5", "0.9999995", "-1.25", "20000000001",
              "1764439540123.5", "2e9", '"1764439540"', '"-.5"', '"1.5e3"', '"20261129"', "-0", "-0.0",
              # ISO text only Pydantic's parser reads so: `_` between date and time, a fraction past nine digits.
              '"2026-11-29_18:05:39Z"', '"2026-11-29T18:05:39.1234567890123+05:30"']


def unix_times() -> list[str]:
    """Date-time fields given as Unix times: built-in tool returns and tool results in their models' layout, and a
    file part's time in another."""
    events = [RETURN_IN_LAYOUT % (n, n, time) for n, time in enumerate(UNIX_TIMES)]
    events += [RESULT_IN_LAYOUT % (n, time) for n, time in enumerate(UNIX_TIMES)]
    other = {"tool_name": "web_search", "tool_call_id": "x", "content": "r", "timestamp": 1764439540.25,
             "part_kind": "builtin-tool-return"}
    events += [json.dumps(event, separators=(",", ":")) for event in boundaries(len(UNIX_TIMES), other)]
    return events


def journal(events: list[dict], spelled: list[str] = ()) -> list[str]:
    events = [json.dumps(event, separators=(",", ":")) for event in events] + list(spelled)
    bodies = RUN[:2] + ['"event":' + event for event in events] + [RESULT]
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    record_lines(Path(sys.argv[1]) / "model-aliases-typed-dicts-dates", journal(events()))
    record_lines(Path(sys.argv[1]) / "model-binary-content", journal(contents()))
    record_lines(Path(sys.argv[1]) / "model-unix-times", journal([], unix_times()))


if __name__ == "__main__":
    main()

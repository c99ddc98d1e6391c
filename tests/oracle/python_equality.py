"""Record the reference where it compares or indexes JSON values as Python does.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/python_equality.py tests/cases

Two rules of the reference read values with Python's own operations, not their spelling:
- consecutive tool-call argument deltas fold into one observation when their stream identities are `==`: `-0`
  and `0`, `1.0` and `1`, `true` and `1`, a dict's keys in any order, an integer and the float of exactly its
  value (an integer one past it is another stream: `json.rs`' unit test holds that, since the browser package's
  numbers cannot tell the two apart);
- a lowered tool result's execution value is `content[result_index]`: a list or a string by an integer (a
  boolean, a negative index from the end, a string's code point), a dict by a string key.
The case `python-equality` holds each, as journal lines spelled so (loaded as `layout_cases.load_item` loads them),
with the reference's output recorded by the shared oracle's `record()`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)

HEAD = '{"thread_id":"t","run_id":"r","sequence":%d,"occurred_at":"2026-11-29T18:05:%02d.5+00:00","event":%s}'


class Journal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def event(self, text: str) -> None:
        sequence = len(self.lines)
        self.lines.append(HEAD % (sequence, sequence, text))

    def dumped(self, event: dict[str, Any]) -> None:
        self.event(json.dumps(event, ensure_ascii=False, separators=(",", ":")))

    def call(self, index: int, call: str, args: str, event_kind: str) -> None:
        part = {"tool_name": "f", "args": args, "tool_call_id": call, "tool_kind": None, "id": None,
                "provider_name": None, "provider_details": None, "part_kind": "tool-call"}
        other = "previous_part_kind" if event_kind == "part_start" else "next_part_kind"
        self.dumped({"index": index, "part": part, other: None, "event_kind": event_kind})

    def delta(self, index: str, call: str, text: str, details: str) -> None:
        self.event('{"index":%s,"delta":{"tool_name_delta":null,"args_delta":%s,"tool_call_id":"%s",'
                   '"provider_name":null,"provider_details":%s,"part_delta_kind":"tool_call"},'
                   '"event_kind":"part_delta"}' % (index, json.dumps(text), call, details))

    def lowered(self, call: str, content: Any, index: Any, outcome: str = "success") -> None:
        part = {"tool_name": "lowered", "content": content, "tool_call_id": call, "tool_kind": None,
                "metadata": {"a13n.tool-content": {"result_index": index}},
                "timestamp": "2026-11-29T18:59:18.959929Z", "outcome": outcome, "retry": None,
                "part_kind": "tool-return"}
        self.dumped({"part": part, "content": None, "event_kind": "function_tool_result"})


# Two deltas of one call each: their (index, provider_details) as spelled.
PAIRS = [
    (("-0", "null"), ("0", "null")),
    (("0", '{"n":1.0}'), ("0", '{"n":1}')),
    (("0", '{"n":true}'), ("0", '{"n":1}')),
    (("0", '{"n":false,"m":-0.0}'), ("0", '{"m":0,"n":0.0}')),
    (("0", '{"n":18446744073709551616}'), ("0", '{"n":1.8446744073709552e19}')),
    (("0", '{"n":[1,2.5]}'), ("0", '{"n":[1.0,2.50]}')),
    (("0", '{"n":"1"}'), ("0", '{"n":1}')),
]

# Lowered results: (content, result_index).
LOWERED = [("ab", 1), ("héllo😀", -1), (["first", {"x": 1}, "last"], -1), (["first", "second"], True),
           ({"k": "by key", "0": "zero"}, "k"), ("ab", False), (["only"], 0), ("😀é", -2)]


def journal() -> list[str]:
    out = Journal()
    out.event('{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}')
    for number, (first, second) in enumerate(PAIRS, 1):
        call = f"c{number}"
        out.call(0, call, "", "part_start")
        out.delta(first[0], call, '{"a":', first[1])
        out.delta(second[0], call, "1}", second[1])
        out.call(0, call, '{"a":1}', "part_end")
    for number, (content, index) in enumerate(LOWERED, 1):
        out.lowered(f"r{number}", content, index)
    # Failed results too: the fold reads the execution value for the failure's message.
    for number, (content, index) in enumerate([("xyz", -1), ({"why": "denied"}, "why")], 1):
        out.call(number, f"f{number}", "", "part_start")
        out.call(number, f"f{number}", "{}", "part_end")
        out.lowered(f"f{number}", content, index, outcome="failed")
    return out.lines


def main() -> None:
    record_lines(Path(sys.argv[1]) / "python-equality", journal())


if __name__ == "__main__":
    main()

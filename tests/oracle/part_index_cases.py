"""Record the reference on model response parts whose `index` is an integer past 64 bits.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/part_index_cases.py tests/cases

A part event's `index` is a Python `int` of any size. It names the part's positional ids
(`RUN:request-N:part-INDEX:KIND`) and keys the observer's open parts, so a checkpoint cut while such a part is
open holds it as a key of its parts. The case is one request whose text, thinking and tool-call parts (each
opened, streamed and ended, two of them open at once) have indexes past 64 bits either way; the reference's output
is recorded by the shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD, RUN  # noqa: E402  (a journal line's head, and a short run's opening)

THINKING, TEXT, CALL = 2**63, 2**64 + 1, -(2**64) - 7
RESULT = ('"result":{"status":"completed","output":"hi there","usage":{"input_tokens":3,"output_tokens":2,'
          '"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}')


def journal() -> list[str]:
    thinking = '"part":{"content":"hm","part_kind":"thinking"}'
    text = '"part":{"content":"hi","part_kind":"text"}'
    call = '"part":{"tool_name":"f","args":"","tool_call_id":"c1","part_kind":"tool-call"}'
    bodies = RUN[:2] + [
        '"event":{"index":%d,%s,"event_kind":"part_start"}' % (THINKING, thinking),
        '"event":{"index":%d,"delta":{"content_delta":" more","part_delta_kind":"thinking"},"event_kind":"part_delta"}'
        % THINKING,
        '"event":{"index":%d,%s,"event_kind":"part_start"}' % (TEXT, text),
        '"event":{"index":%d,"delta":{"content_delta":" there","part_delta_kind":"text"},"event_kind":"part_delta"}'
        % TEXT,
        '"event":{"index":%d,"part":{"content":"hm more","part_kind":"thinking"},"event_kind":"part_end"}' % THINKING,
        '"event":{"index":%d,"part":{"content":"hi there","part_kind":"text"},"event_kind":"part_end"}' % TEXT,
        '"event":{"index":%d,%s,"event_kind":"part_start"}' % (CALL, call),
        '"event":{"index":%d,"delta":{"args_delta":"{\\"a\\":","tool_call_id":"c1","part_delta_kind":"tool_call"},'
        '"event_kind":"part_delta"}' % CALL,
        '"event":{"index":%d,"delta":{"args_delta":"1}","tool_call_id":"c1","part_delta_kind":"tool_call"},'
        '"event_kind":"part_delta"}' % CALL,
        '"event":{"index":%d,"part":{"tool_name":"f","args":"{\\"a\\":1}","tool_call_id":"c1","part_kind":"tool-call"},'
        '"event_kind":"part_end"}' % CALL,
        '"event":{"index":%d,"part":{"content":"x","part_kind":"text"},"event_kind":"part_start"}' % (10**30),
        '"event":{"index":%d,"part":{"content":"x","part_kind":"text"},"event_kind":"part_end"}' % (10**30),
        RESULT,
    ]
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    record_lines(Path(sys.argv[1]) / "part-index-beyond-64-bits", journal())


if __name__ == "__main__":
    main()

"""Record the reference on tool-call arguments holding numbers Python reads as infinite, and on a suspension that
defers nothing.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/finite_cases.py tests/cases

- `non-finite-tool-args`: `json` reads `1e400` as `inf`. A tool call's arguments given as an object are written
  for `TOOL_CALL_ARGS` from their JSON-mode dump, where Pydantic has made such a float `None`: `null`, at any
  depth, in a part's start and end and in a function tool call's observation.
- `suspended-deferring-nothing`: a suspended result whose deferred requests hold no call and no approval. The
  interrupt outcome's model needs one interrupt at least, so the terminal item raises its `ValidationError`.

The reference's output is recorded by the shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD, RUN  # noqa: E402  (a journal line's head, and a short run's opening)

USAGE = '"usage":{"input_tokens":3,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}'
CALL = '"part":{"tool_name":"f","args":%s,"tool_call_id":"c%d","part_kind":"tool-call"}'
ARGS = ['{"x":1e400}', '{"a":[1e999,{"b":-1E+400}],"c":1.5}', '{"n":1.8e308,"ok":"yes"}']


def tool_args() -> list[str]:
    bodies = RUN[:2]
    for n, args in enumerate(ARGS):
        call = CALL % (args, n)
        bodies += [
            '"event":{"index":%d,%s,"event_kind":"part_start"}' % (n, call),
            '"event":{"index":%d,%s,"event_kind":"part_end"}' % (n, call),
            '"event":{%s,"event_kind":"function_tool_call"}' % call,
        ]
    bodies.append('"result":{"status":"completed","output":"done",%s}' % USAGE)
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def deferring_nothing() -> list[str]:
    bodies = RUN + ['"result":{"status":"suspended","deferred":{"calls":[],"approvals":[],"metadata":{}},%s}' % USAGE]
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    record_lines(Path(sys.argv[1]) / "non-finite-tool-args", tool_args())
    record_lines(Path(sys.argv[1]) / "suspended-deferring-nothing", deferring_nothing())


if __name__ == "__main__":
    main()

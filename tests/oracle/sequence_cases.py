"""Record the reference on real runs whose items' sequences are past 64 bits.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/sequence_cases.py tests/cases

A source item's `sequence` is a Python `int` of 0 or more, of any size. The reference copies it into carried-through
observations, a terminal event's raw event, input message ids (`RUN:input:SEQUENCE`) and fragment identities. Each
case is a public corpus stream with 2**64 added to every item's sequence; the reference's output is recorded by the
shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import CORPUS, record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)

STREAMS = ["real-tools", "real-subagent"]
OFFSET = 2**64


def shifted(line: str) -> str:
    item = json.loads(line)
    item["sequence"] += OFFSET
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def main() -> None:
    for name in STREAMS:
        # Split at newlines alone: `splitlines()` also splits at U+2028 and other separators a JSON string may hold.
        lines = [line for line in (CORPUS / name / "source.jsonl").read_text().split("\n") if line]
        record_lines(Path(sys.argv[1]) / f"sequence-beyond-64-bits-{name}", [shifted(line) for line in lines])


if __name__ == "__main__":
    main()

"""Record the reference on Run results whose usage AG-UI's `TokenUsage` refuses.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/usage_cases.py tests/cases

The observer turns a Run's usage into AG-UI's `TokenUsage`, whose counts go from 0 to 2**53 - 1; the Harness's
own usage model bounds them less. A count past that bound (the total of input and output too), or a negative
reasoning count, makes the model raise its `ValidationError` at the Run's result; a reasoning count of `-0` is the
count 0. Each case is a short run whose result holds one such usage; the reference's output is recorded by the
shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)

HEAD = '{"thread_id":"t1","run_id":"r1","sequence":%d,"occurred_at":"2026-12-07T04:33:%02d.261216+00:00",%s}'

RUN = [
    '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}',
    '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"model_request_started",'
    '"request_id":"m1","request_index":0,"message_count":1}}',
    '"event":{"index":0,"part":{"content":"hi","part_kind":"text"},"event_kind":"part_start"}',
    '"event":{"index":0,"part":{"content":"hi","part_kind":"text"},"event_kind":"part_end"}',
]

BOUND = 2**53 - 1
# Written as `-0` once dumped: `json.dumps` cannot write it.
NEG_ZERO = "-0 here"

CASES: dict[str, dict] = {
    "result-usage-input-over-bound": {"input_tokens": BOUND + 1, "output_tokens": 0},
    "result-usage-total-over-bound": {"input_tokens": BOUND - 1, "output_tokens": 5},
    "result-usage-cache-read-over-bound": {"input_tokens": 1, "output_tokens": 2, "cache_read_tokens": BOUND + 1},
    "result-usage-reasoning-negative": {"input_tokens": 5, "output_tokens": 7, "details": {"reasoning_tokens": -1}},
    # Python's `json` reads `-0` as the integer 0, a count like any other (found by helper-63).
    "result-usage-reasoning-negative-zero": {
        "input_tokens": 5, "output_tokens": 7, "details": {"reasoning_tokens": NEG_ZERO},
    },
}


def journal(counts: dict) -> list[str]:
    usage = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "details": {}}
    usage.update(counts)
    result = {"status": "completed", "output": "hi", "usage": usage}
    dumped = json.dumps(result, separators=(",", ":")).replace(f'"{NEG_ZERO}"', "-0")
    bodies = RUN + ['"result":' + dumped]
    return [HEAD % (n, 51 + 2 * n, body) for n, body in enumerate(bodies)]


def main() -> None:
    for name, counts in CASES.items():
        record_lines(Path(sys.argv[1]) / name, journal(counts))


if __name__ == "__main__":
    main()

"""Record the reference on model requests whose `request_index` is an integer beyond 64 bits, or `-0`.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/request_index_cases.py tests/cases

A `model_request_started` payload's `request_index`, when an `int` of 0 or more, names the positional ids of the
request's parts (`RUN:request-INDEX:part-N:KIND`) and is kept in the observer's state, and so in every checkpoint.
Python's `int` has no size limit and `json` reads `-0` as `0`; a float (`1.0`) or a negative index changes
nothing. The case is a short run of five requests with such indexes (past 128 bits too), each with text and thinking parts whose ids
are positional; the reference's output is recorded by the shared oracle's `record()` on the native objects the
lines load into.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD  # noqa: E402  (a journal line's head)

START = '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}'
REQUEST = ('"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"model_request_started",'
           '"request_id":"m%d","request_index":%s,"message_count":1}}')
PARTS = [
    '"event":{"index":0,"part":{"content":"hm","id":null,"signature":null,"provider_name":null,'
    '"provider_details":null,"part_kind":"thinking"},"previous_part_kind":null,"event_kind":"part_start"}',
    '"event":{"index":0,"part":{"content":"hm","id":null,"signature":null,"provider_name":null,'
    '"provider_details":null,"part_kind":"thinking"},"next_part_kind":"text","event_kind":"part_end"}',
    '"event":{"index":1,"part":{"content":"hi","id":null,"provider_name":null,"provider_details":null,'
    '"part_kind":"text"},"previous_part_kind":"thinking","event_kind":"part_start"}',
    '"event":{"index":1,"delta":{"content_delta":" there","provider_name":null,"provider_details":null,'
    '"part_delta_kind":"text"},"event_kind":"part_delta"}',
    '"event":{"index":1,"part":{"content":"hi there","id":null,"provider_name":null,"provider_details":null,'
    '"part_kind":"text"},"next_part_kind":null,"event_kind":"part_end"}',
]
INDEXES = ["18446744073709551616", "-0", "1.0", "99999999999999999999999999999999999999", "1" + "0" * 44]
RESULT = ('"result":{"status":"completed","output":"hi there","usage":{"input_tokens":3,"output_tokens":2,'
          '"cache_read_tokens":0,"cache_write_tokens":0,"details":{}}}')


def journal() -> list[str]:
    bodies = [START]
    for n, index in enumerate(INDEXES):
        bodies += [REQUEST % (n, index)] + PARTS
    bodies.append(RESULT)
    return [HEAD % (n, n, body) for n, body in enumerate(bodies)]


def main() -> None:
    record_lines(Path(sys.argv[1]) / "request-index-beyond-64-bits", journal())


if __name__ == "__main__":
    main()

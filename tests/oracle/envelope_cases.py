"""Record the reference on capability events of a kind no class has: none, or one no class is registered under.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/envelope_cases.py tests/cases

Pydantic AI reads a capability event whose `kind` names no class of the reading process into its unknown
envelope, and dumps that envelope with the payload's keys first and the envelope's fields after them. An event
written with a `kind` of the form `NAMESPACE.NAME` may be the dump of a class its writer had, so a host with that
class reads it back as written; an event without a `kind` (it defaults to `""`), or with one no class can be
registered under (no dot, an empty namespace or name), has no class anywhere, so every host reads it into the
envelope. The case is a short run holding such events in several spellings (payload keys in any order, a payload
key named `data`, ids given or not, no payload at all, `event_kind` first, large and negative-zero integers);
the reference's output is recorded by the shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)
from usage_cases import HEAD, RUN  # noqa: E402  (a short run's lines: its start, a request, a text part)

START, PART_END = RUN[:3], RUN[3]

NO_CLASS = [
    '{"event_kind":"capability","capability_id":"cap-1","zeta":1,"alpha":{"b":2,"a":1}}',
    '{"event_kind":"capability"}',
    '{"data":{"x":1},"tool_name":"t","event_kind":"capability","y":[18446744073709551616,-0]}',
    '{"tool_call_id":"c1","event_kind":"capability","tool_name":null,"capability_id":null}',
    '{"event_kind":"capability","data":null,"note":"caf\\u00e9 \\ud83d\\ude00"}',
    '{"x":1,"kind":"","event_kind":"capability"}',
    '{"kind":"nodot","capability_id":"c","event_kind":"capability","y":{"z":-0}}',
    '{"event_kind":"capability","kind":".lead","x":[1]}',
    '{"kind":"ns.","event_kind":"capability"}',
]

END = [
    PART_END,
    '"result":{"status":"completed","output":"hi","usage":{"input_tokens":3,"output_tokens":2,"cache_read_tokens":0,'
    '"cache_write_tokens":0,"details":{}}}',
]


def journal() -> list[str]:
    bodies = START + ['"event":' + event for event in NO_CLASS] + END
    return [HEAD % (n, 10 + n, body) for n, body in enumerate(bodies)]


def main() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Unknown event kind ...": the envelope is what this case records
        record_lines(Path(sys.argv[1]) / "capability-kind-no-class-has", journal())


if __name__ == "__main__":
    main()

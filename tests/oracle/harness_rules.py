"""Record the reference on journal lines its Harness models rewrite as they load.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/harness_rules.py tests/cases

A Harness extension event's model redacts its payload (a member under an authority's key becomes "[REDACTED]",
`Bearer <credential>` in a string becomes `Bearer [REDACTED]`) before bounding it to 64 KiB, and the observer reads
a run's `usage.details.reasoning_tokens` as Python's `isinstance(value, int)` does (a boolean is one). A journal the
Harness wrote is redacted already; one written by other hands is not. The case `harness-rules` holds each, in lines
the carried lane would take as written (lifecycle, usage and state events) and in others, with the reference's
output recorded by the shared oracle's `record()` on the native objects the lines load into.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from layout_cases import record_lines  # noqa: E402  (the shared oracle's recorder on journal lines)

HEAD = '{"thread_id":"t","run_id":"r","sequence":%d,"occurred_at":"2026-11-29T18:05:%02d.5+00:00",%s}'

PAYLOADS: list[tuple[str, Any]] = [
    ("lifecycle", {"type": "run_started"}),
    # Harness-written payloads, redacted already: kept as they are.
    ("lifecycle", {"type": "model_request_started", "request_index": 0, "api_key": "[REDACTED]"}),
    ("usage", {"input_tokens": 3, "output_tokens": 5, "cache_read_tokens": 0, "token_count": 2,
               "note": "Bearer [REDACTED]"}),
    # Authorities' keys, in any case and separator, and what is not one.
    ("state", {"type": "s", "api_key": "k", "X-Api-Key": 1, "x.api_key": [1], "TO\u212aEN": "t",
               "input_tokens": 3, "tokenizer": "ok", "grants": {"a": 1}, "Passwd": None,
               "nested": [{"Authorization": "Basic x", "deeper": {"client_secret": {"v": 1}}}]}),
    ("state", {"type": "s", "credential_configured": 1, "b": {"credential_configured": True},
               "c": {"credential_configured": 0}, "d": {"credential_configured": None},
               "Credential_configured": True, "credential-configured": False}),
    # Bearer credentials in strings: any ASCII case, Python's whitespace, the letters that case-fold into the
    # credential's, and what is not one.
    ("lifecycle", {"type": "model_request_started", "request_index": 1, "header": "BEARER ab.cd"}),
    ("usage", {"input_tokens": 1, "output_tokens": 1, "detail": "bearer\x1fx-1 then Bearer \u0131\u017f\u212a/= end"}),
    ("state", {"type": "s", "text": "aBearer x, (Bearer) y, Bearer, bearer\u3000z", "list": ["Bearer t0k3n~+/="]}),
    # After a character Python's `\w` does not hold (a circled letter, marks Unicode counts alphabetic), a word
    # boundary; after one it holds, none.
    ("lifecycle", {"type": "model_request_started", "request_index": 2, "note": "\u24b6Bearer abc"}),
    ("state", {"type": "s", "marks": "\u0345Bearer x \u093eBearer y \u00e9Bearer z \u0663Bearer w"}),
    # Larger than 64 KiB as written, smaller once redacted.
    ("state", {"type": "s", "secret": "s" * 70_000, "kept": "k" * 100}),
]


def journal() -> list[str]:
    lines: list[str] = []

    def line(body: str) -> None:
        lines.append(HEAD % (len(lines), len(lines), body))

    for kind, payload in PAYLOADS:
        event = {"schema_version": "1", "kind": kind, "payload": payload}
        line('"event":' + json.dumps(event, ensure_ascii=False, separators=(",", ":")))
    usage = {"input_tokens": 1, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0,
             "details": {"reasoning_tokens": True}}
    line('"result":' + json.dumps({"status": "completed", "output": "x", "usage": usage}, separators=(",", ":")))
    return lines


def main() -> None:
    record_lines(Path(sys.argv[1]) / "harness-rules", journal())


if __name__ == "__main__":
    main()

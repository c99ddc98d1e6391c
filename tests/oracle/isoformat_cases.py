"""Record what Python 3.13's `datetime.fromisoformat` makes of date-time spellings: how a host reads `occurred_at`.

usage (Python 3.13):
    python tests/oracle/isoformat_cases.py > crates/a13n-stream-protocol/tests/data/fromisoformat.jsonl

Each output line is [text, isoformat] where isoformat is `datetime.fromisoformat(text).isoformat()`, or null where
it raises. The texts are every pairing of date and separator forms, of time and offset forms, and seeded one-byte
edits of them (a character dropped, doubled, replaced), so both the accepted spellings and their near misses are
recorded.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime

DATES = ["2026-11-29", "20261129", "2026-W48", "2026W48", "2026-W48-7", "2026W487", "2026-W53-1", "2025-W53-1",
         "2020-W53-7", "0001-01-01", "9999-12-31", "0001-W01-1", "9999-W52-5", "9999-W52-6", "2024-02-29",
         "2025-02-29", "2026-13-01", "2026-00-10", "0000-01-01", "2026-1129", "202611-29", "2026-W00",
         "2026-W48-0", "2026-W48-8", "2026-W4", "2026W4", "2026-11-2", "2026-W48-"]
SEPARATORS = ["T", " ", "t", "é", "\U0001f680", "-", "1", "", "x", "Z", "+", "\u2028"]
TIMES = ["", "1", "18", "1805", "180539", "18:05", "18:05:39", "18:05:39.", "18:05:39.1", "18:05:39.123",
         "18:05:39.123456", "18:05:39.1234567", "18:05:39,5", "180539123", "1805.5", "18:05.5", "18.5", "24:00",
         "23:59:59", "23:59:60", "18:60", "18:05:39:00", "18:05:3", "1:05", "18:5", "18:05:39x", "18:05:39.123x",
         "18:05:39.1234567x", "18:05:39 ", "18:05:39.123456 ", "18:05:39xy", "18:0539", "1805:39", "00:00",
         "18:05:39.000000", "18:05:39.999999999", "18:05:39.12345678901234"]
OFFSETS = ["", "Z", "z", "+00:00", "-00:00", "+05:30", "+0530", "+05", "+5", "-01:30", "+00:99", "+23:59",
           "+24:00", "-24:00", "+23:59:59.999999", "+00:00:00.5", "-00:00:01.5", "+05:30:15", "+05:30:15.25",
           "Z ", "ZZ", "+05:30x", "+05:30:", "+05:30:1", "+05:30.5", "-05:30:00.", "+0530:00", "+053015",
           "-", "+", "+05:30:15.1234567", "Z+00:00", "+05:30Z", "\x00", "Z\x00x", "+05:30\x00x"]
BASES = ["2026-11-29T18:05:39.742828+00:00", "20261129T180539Z", "2026-W48-7 18:05+05:30",
         "2026-11-29T18:05:39,5-01:30", "2026-11-29T18:05:39.123456 +00:00"]


def texts() -> list[str]:
    out: list[str] = []
    for date in DATES:
        for separator in SEPARATORS:
            out.append(date + separator + "18:05:39+00:00")
        out.append(date)
        for time in TIMES[::3]:
            out.append(date + "T" + time)
    for time in TIMES:
        for offset in OFFSETS:
            out.append("2026-11-29T" + time + offset)
            out.append("20261129T" + time + offset)
    rng = random.Random(20261206)
    alphabet = "0123456789:.,+-TZzW x\u00e9"
    for _ in range(1500):
        text = list(rng.choice(BASES))
        at = rng.randrange(len(text))
        match rng.randrange(3):
            case 0:
                del text[at]
            case 1:
                text.insert(at, text[at])
            case _:
                text[at] = rng.choice(alphabet)
        out.append("".join(text))
    return list(dict.fromkeys(out))


def main() -> None:
    for text in texts():
        try:
            written = datetime.fromisoformat(text).isoformat()
        except ValueError:
            written = None
        sys.stdout.write(json.dumps([text, written], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

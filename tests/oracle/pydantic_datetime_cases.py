"""Record what Pydantic's lax mode makes of a date-time field's value: ISO 8601 text, a Unix time (a JSON number, or
text holding one), and their near misses.

usage (Python 3.13 with a13n-stream-protocol 0.21.0, which brings the Pydantic the reference runs on):
    python tests/oracle/pydantic_datetime_cases.py > crates/a13n-stream-protocol/tests/data/pydantic_datetimes.jsonl

Each output line is [given, written]: `given` is the field's value as a journal line holds it (a JSON number, kept
as its literal, or a string), `written` what Pydantic's JSON mode writes for the `datetime` it validates into, or
null where it refuses the value. Values are read as the reference's journal loader reads an event: `json.loads`,
then `validate_python`. Unix times cover seconds and milliseconds (the switch at 2e10), negative times, fractions
that round up to the next second, the ends of Python's date range, integers past 64 bits, and the grammar of
numbers given as text (signs, a bare point, exponents, which text takes only after a point), with seeded random
ones. ISO text covers `isoformat_cases.py`'s spellings (those `fromisoformat` reads and their near misses) and
the separators, fraction lengths and offsets Pydantic's own parser reads.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

FIXED = [
    "0", "-0", "1", "-1", "0.0", "-0.0", "1764439540", "1764439540.5", "-1.5", "-1.25", "-0.25", "5e-7", "-5e-7",
    "-4e-7", "-6e-7", "1.5e-6", "2.5e-6", "1.9999999", "0.9999995", "0.99999949", "-0.9999995", "-1.0000005",
    "1.0000005", "0.1234565", "20000000000", "20000000001", "-20000000000", "-20000000001", "20000000000.5",
    "-20000000000.5", "20000000001.5", "-20000000001.5", "1764439540123", "1764439540123.4567",
    "1764439540123.0005", "1764439540123.0015", "1764439540123.999", "1e14", "1E14", "1e20", "1e400", "-1e400",
    "253402300799", "253402300799999", "253402300800000", "253402300799.9999995", "-62135596800000",
    "-62135596800001", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551616", "15e2", "1.5e3", "1e-9", "-1e-9",
]
TEXTS = [
    "0", "-0", "+0", "-0.0", "1764439540", "+1764439540", "-5", "1764439540.5", "1764439540.", ".5", "-.5", "+.5",
    "0.", "00.5", "00012", "20261129", "2026", "1.", ".", "-", "+", "", "--5", "5-", "1.2.3", "1e9", "15e2",
    "10e2", "1.5e3", "1.5E3", "1.e3", "5.e2", ".5e2", "1.5e+3", "1.5e-3", "-1.5e3", "+1.5e3", "1.5e", "1.5e+",
    "1.5e400", "1.5e3x", "inf", "nan", "Infinity", "0x10", "1_000", "1,5", " 1764439540", "1764439540 ", "1 ",
    "1.5 ", "\u0661\u0662\u0663", "12\u00a0", "1764439540.00000059", "1764439540.9999995", "1764439540.1234565",
    "1764439540.1234567890123456789", "20000000000", "20000000000.5", "-20000000000.5", "0020000000001",
    "20000000001.0000005", "1764439540123.0005", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "12345678901234567890", "99999999999999999", "100000000000000", "253402300799999",
    "253402300800000", "-62135596800000", "-62135596800001", "2026-11-29T18:05:40Z", "2026-11-29",
]


def random_values(rng: random.Random) -> list[object]:
    """Seeded numbers and texts around the places a rule changes: fractions at half a microsecond, the 2e10
    switch, the date range's ends, digits past what a float holds."""
    out: list[object] = []
    centres = [0, 1, -1, 1764439540, 2e10, -2e10, 1764439540123, 253402300799999, -62135596800000]
    for _ in range(1200):
        centre = rng.choice(centres)
        match rng.randrange(6):
            case 0:
                out.append(json.dumps(centre + rng.uniform(-2, 2)))
            case 1:
                out.append(json.dumps(int(centre) + rng.randrange(-3, 4)))
            case 2:
                micros = rng.randrange(-3_000_000, 3_000_000)
                out.append(json.dumps(centre + micros / 1e6 + rng.choice([0, 5e-7, -5e-7, 4.9e-7, 5.1e-7])))
            case 3:
                digits = rng.randrange(1, 12)
                fraction = "".join(rng.choice("0123456789") for _ in range(digits))
                sign = rng.choice(["", "-", "+"])
                out.append([f"{sign}{int(abs(centre))}.{fraction}"])
            case 4:
                out.append(json.dumps(rng.uniform(-3e11, 3e11)))
            case _:
                out.append([str(int(centre) + rng.randrange(-2000, 2000))])
    return out


def iso_texts() -> list[str]:
    """ISO 8601 spellings: `isoformat_cases.py`'s, and every pairing of the separators, clock forms and offsets
    Pydantic's parser has rules for."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from isoformat_cases import texts  # the spellings Python's `fromisoformat` was recorded on

    out = list(texts())
    separators = ["T", "t", " ", "_", "x", "-"]
    clocks = ["18:05", "18:05:39", "18:05:39.5", "18:05:39,5", "18:05:39.", "18:05:39.1234567",
              "18:05:39.123456789", "18:05:39." + "1234567890" * 4, "18:05:60", "23:59:59.9999999", "24:00", "18"]
    offsets = ["", "Z", "z", "+00:00", "-00:00", "+0530", "+05:30", "-23:59", "+24:00", "+05", "+05:30:15", " Z"]
    for date in ["2026-11-29", "0001-01-01", "9999-12-31", "2024-02-29"]:
        for separator in separators:
            for clock in clocks:
                for offset in offsets:
                    out.append(date + separator + clock + offset)
    return out


def main() -> None:
    adapter = TypeAdapter(datetime)
    rng = random.Random(20261207)
    givens: list[str] = list(FIXED) + [json.dumps(text, ensure_ascii=False) for text in TEXTS + iso_texts()]
    for value in random_values(rng):
        givens.append(json.dumps(value[0]) if isinstance(value, list) else value)
    for given in dict.fromkeys(givens):
        try:
            written = adapter.dump_python(adapter.validate_python(json.loads(given)), mode="json")
        except (ValidationError, OverflowError):
            written = None
        sys.stdout.write(json.dumps([given, written], ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

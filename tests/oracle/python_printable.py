"""Write the characters Python's `str.isprintable` refuses as a Rust table
(crates/a13n-stream-protocol/src/pystr_printable.rs).

A Pydantic error quotes the input it refused with Python's `repr`, which escapes every character `str.isprintable`
refuses: controls, separators but the space, format characters, surrogates, private use and unassigned code
points, by Python 3.13's Unicode (15.1). The table is those characters as ranges.

usage (under Python 3.13):
    python tests/oracle/python_printable.py > crates/a13n-stream-protocol/src/pystr_printable.rs
"""

from __future__ import annotations

from python_word import code_ranges, print_table


def main() -> None:
    found = code_ranges(lambda c: not c.isprintable(), 0)
    doc = "The characters Python's `str.isprintable` refuses, as inclusive ranges in order."
    print_table("python_printable.py", doc, "NOT_PRINTABLE", found)


if __name__ == "__main__":
    main()

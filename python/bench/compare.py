"""The reference and this package in one Python process, on the same journals.

usage (a Python >= 3.13 with both packages installed; the journals come from the Rust CLI):
    cargo build --release -p a13n-stream
    python -m venv /tmp/cmp && /tmp/cmp/bin/pip install ./python a13n-stream-protocol==0.21.0
    /tmp/cmp/bin/python python/bench/compare.py [--sizes 10000,100000] [--kinds text,tools,subagents] [--runs 3]

Figures, per journal of N lines (items/s, higher is better):
- observe: one observer, each line observed in turn. The reference's line is decoded into its objects first
  (part of its cost, as for any host reading a journal); `observe*` gives the reference prebuilt objects.
- fold: one display fold, each line folded (`fold_line` here; `fold(events(item), item)` in the reference).
- replay: the whole journal folded into a checkpoint (`replay` here, one call; the reference's fold of every line
  then its export).
The journals' terminal result becomes a cancelled one on the reference side (see bench/compare_reference.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from compare_reference import emit, timed, to_item  # noqa: E402

import a13n_stream_rs as fast  # noqa: E402
from a13n_stream_protocol import HarnessAguiStreamObserver  # noqa: E402
from a13n_stream_protocol.display import DisplayFold  # noqa: E402


def reference_observe(lines: list[str], decode: bool) -> Callable[[], Any]:
    items = None if decode else [to_item(line) for line in lines]

    def run() -> None:
        observer = HarnessAguiStreamObserver(retain_events=False)
        for item in items if items is not None else map(to_item, lines):
            try:
                observer.observe(item)
            except ValueError:
                pass

    return run


def reference_fold(lines: list[str], decode: bool, export: bool) -> Callable[[], Any]:
    items = None if decode else [to_item(line) for line in lines]

    def run() -> Any:
        source = items if items is not None else map(to_item, lines)
        display = None
        for item in source:
            display = display or DisplayFold(item.run_id)
            try:
                display.fold(display.events(item), item)
            except ValueError:
                pass
        return display.export().model_dump_json() if export and display else None

    return run


def ours_observe(lines: list[str]) -> Callable[[], Any]:
    def run() -> None:
        observer = fast.HarnessAguiStreamObserver(retain_events=False)
        for line in lines:
            observer.observe(line)

    return run


def ours_fold(lines: list[str]) -> Callable[[], Any]:
    def run() -> None:
        fold = fast.DisplayFold("run-bench")
        for line in lines:
            fold.fold_line(line)

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/release/a13n-stream")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--kinds", default="text,tools,subagents")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'figure':<34} {'reference items/s':>18} {'a13n_stream_rs items/s':>23} {'ratio':>9}")
    for size in map(int, args.sizes.split(",")):
        for kind in args.kinds.split(","):
            lines = emit(args.binary, kind, size)
            runs = 1 if size >= 100_000 else args.runs
            figures = [
                ("observe", reference_observe(lines, True), ours_observe(lines)),
                ("observe*", reference_observe(lines, False), ours_observe(lines)),
                ("fold", reference_fold(lines, True, False), ours_fold(lines)),
                ("fold*", reference_fold(lines, False, False), ours_fold(lines)),
                ("replay", reference_fold(lines, True, True), lambda: fast.replay(lines)),
                ("replay*", reference_fold(lines, False, True), lambda: fast.replay(lines)),
            ]
            for name, reference, ours in figures:
                theirs = size / timed(runs, reference)
                mine = size / timed(max(runs, 3), ours)
                print(f"{name + '/' + kind + '/' + str(size):<34} {theirs:>18,.0f} {mine:>23,.0f} {mine / theirs:>8.1f}x")
                sys.stdout.flush()
    print("* the reference given prebuilt objects: its line decoding is left out of its time", file=sys.stderr)


if __name__ == "__main__":
    main()

"""The reference and this package in one Python process, on the same journals.

usage (a Python >= 3.13 with both packages installed; the journals come from the Rust CLI):
    cargo build --release -p a13n-stream
    python -m venv /tmp/cmp && /tmp/cmp/bin/pip install ./python a13n-stream-protocol==0.21.0
    /tmp/cmp/bin/python python/bench/compare.py [--sizes 10000,100000] [--kinds text,tools,subagents] [--runs 3]
        [--prebuilt]

Figures, per journal of N lines (items/s, higher is better):
- observe: one observer, each line observed in turn. The reference's line is decoded into its objects first
  (part of its cost, as for any host reading a journal); with `--prebuilt`, `observe*` also gives the reference
  prebuilt objects.
- fold: one display fold, each line folded (`fold_line` here; `fold(events(item), item)` in the reference).
- replay: the whole journal folded into a checkpoint (`replay` here, one call; the reference's fold of every line
  then its export: the fold figure's own run, with the export timed after it).
Journals of 100k lines are timed once on each side, without a warm-up (the reference folds the subagents journal
in about half an hour).
The journals' terminal result becomes a cancelled one on the reference side (see bench/compare_reference.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from compare_reference import emit, timed, to_item  # noqa: E402

import a13n_stream_rs as fast  # noqa: E402
from a13n_stream_protocol import HarnessAguiStreamObserver  # noqa: E402
from a13n_stream_protocol.display import DisplayFold  # noqa: E402


def reference_observe(lines: list[str], items: list[Any] | None) -> float:
    observer = HarnessAguiStreamObserver(retain_events=False)
    start = time.perf_counter()
    for item in items if items is not None else map(to_item, lines):
        try:
            observer.observe(item)
        except ValueError:
            pass
    return time.perf_counter() - start


def reference_fold(lines: list[str], items: list[Any] | None) -> tuple[float, float]:
    """One fold of the journal then its export: (seconds folding, seconds exporting)."""
    source = items if items is not None else map(to_item, lines)
    display = None
    start = time.perf_counter()
    for item in source:
        display = display or DisplayFold(item.run_id)
        try:
            display.fold(display.events(item), item)
        except ValueError:
            pass
    folded = time.perf_counter()
    assert display is not None
    display.export().model_dump_json()
    return folded - start, time.perf_counter() - folded


def reference_figures(lines: list[str], runs: int, prebuilt: bool) -> dict[str, float]:
    """Seconds per figure for the reference: the median of `runs` runs (after a warm-up when `runs` > 1)."""
    items = [to_item(line) for line in lines] if prebuilt else None
    rounds = runs + 1 if runs > 1 else 1
    observed = [reference_observe(lines, items) for _ in range(rounds)][-runs:]
    folds = [reference_fold(lines, items) for _ in range(rounds)][-runs:]
    star = "*" if prebuilt else ""
    return {
        f"observe{star}": statistics.median(observed),
        f"fold{star}": statistics.median(fold for fold, _ in folds),
        f"replay{star}": statistics.median(fold + export for fold, export in folds),
    }


def our_figures(lines: list[str], runs: int) -> dict[str, float]:
    def observe() -> None:
        observer = fast.HarnessAguiStreamObserver(retain_events=False)
        for line in lines:
            observer.observe(line)

    def fold() -> None:
        display = fast.DisplayFold("run-bench")
        for line in lines:
            display.fold_line(line)

    runs = max(runs, 3)
    return {"observe": timed(runs, observe), "fold": timed(runs, fold), "replay": timed(runs, lambda: fast.replay(lines))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/release/a13n-stream")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--kinds", default="text,tools,subagents")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per figure (1 for journals of 100k lines)")
    parser.add_argument("--prebuilt", action="store_true", help="also time the reference on prebuilt objects (*)")
    args = parser.parse_args()
    print(f"{'figure':<34} {'reference items/s':>18} {'a13n_stream_rs items/s':>23} {'ratio':>9}")
    for size in map(int, args.sizes.split(",")):
        for kind in args.kinds.split(","):
            lines = emit(args.binary, kind, size)
            runs = 1 if size >= 100_000 else args.runs
            ours = our_figures(lines, runs)
            theirs = reference_figures(lines, runs, False)
            if args.prebuilt:
                theirs |= reference_figures(lines, runs, True)
            for name, seconds in theirs.items():
                mine = size / ours[name.rstrip("*")]
                reference = size / seconds
                print(f"{name + '/' + kind + '/' + str(size):<34} {reference:>18,.0f} {mine:>23,.0f} {mine / reference:>8.1f}x")
                sys.stdout.flush()
    if args.prebuilt:
        print("* the reference given prebuilt objects: its line decoding is left out of its time", file=sys.stderr)


if __name__ == "__main__":
    main()

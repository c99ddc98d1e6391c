"""A Python host's work on a real Harness run, timed for the reference and this package in one process.

usage (Python >= 3.13 with a13n-harness 0.21.0, the reference and this package installed):
    python python/bench/live_loop.py [--tool-rounds 40] [--words 400] [--runs 5] [--seed 1]

One real offline Harness run (examples/python/harness_run.py; `--tool-rounds 40 --words 400` makes about 2,700
items) is made once; both packages then work on the same native objects. Figures, in microseconds per item (lower
is better), the same statistic for both sides, the cases interleaved round by round (`--runs` rounds). In a round a
case runs back to back at least `--repeat` times and until it has taken `--min-seconds` (as `timeit` sizes its
loops), so that a case of a few milliseconds is timed in the steady state the reference's cases of a third of a
second are always in; the round's figure is the median of its runs after the first, and a case's figure its best
round. (A median, not the fastest run: a short case runs many more times a round than a long one, and the fastest of
many runs would favour it.) The fastest first run of a round is printed too (a case timed straight after the
others, as a host calls it once):

- live loop: the product page's `observed = fold.fold(fold.events(source), source)` for every native item, all
  conversion included (the reference's baseline for every ratio);
- fold_line: this package's JSON fast path, one journal line (`to_source_line(item)`, written beforehand) at a time;
- replay: this package's `replay(lines)`, the whole journal folded into its checkpoint in one call (the reference:
  its live loop and then `export().model_dump_json()`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))

import a13n_stream_protocol.display as reference  # noqa: E402
from harness_run import real_run  # noqa: E402

import a13n_stream_rs  # noqa: E402
import a13n_stream_rs.display as ours  # noqa: E402


def live_loop(package: Any, items: list[Any], export: bool = False) -> float:
    fold = package.DisplayFold(items[0].run_id)
    start = time.perf_counter()
    for source in items:
        fold.fold(fold.events(source), source)
    if export:
        fold.export().model_dump_json()
    return time.perf_counter() - start


def fold_lines(lines: list[str], run_id: str) -> float:
    fold = ours.DisplayFold(run_id)
    start = time.perf_counter()
    for line in lines:
        fold.fold_line(line)
    return time.perf_counter() - start


def replay(lines: list[str]) -> float:
    start = time.perf_counter()
    a13n_stream_rs.replay(lines)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool-rounds", type=int, default=40)
    parser.add_argument("--words", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=0.25)
    args = parser.parse_args()
    items = real_run(args.seed, tool_rounds=args.tool_rounds, words=args.words)
    lines = [a13n_stream_rs.to_source_line(item) for item in items]
    # The two sides fold the same items to the same checkpoint (checked, not assumed).
    theirs, mine = reference.DisplayFold(items[0].run_id), ours.DisplayFold(items[0].run_id)
    for source in items:
        theirs.fold(theirs.events(source), source)
        mine.fold(mine.events(source), source)
    assert theirs.export().model_dump_json() == mine.export().model_dump_json()
    timings: dict[str, list[float]] = {}
    first_runs: dict[str, list[float]] = {}
    cases: dict[str, Callable[[], float]] = {
        "reference live loop": lambda: live_loop(reference, items),
        "reference live loop + export": lambda: live_loop(reference, items, export=True),
        "live loop": lambda: live_loop(ours, items),
        "fold_line": lambda: fold_lines(lines, items[0].run_id),
        "replay": lambda: replay(lines),
    }
    for _ in range(args.runs):
        for name, case in cases.items():
            runs = timed_runs(case, args.repeat, args.min_seconds)
            first_runs.setdefault(name, []).append(runs[0])
            timings.setdefault(name, []).append(statistics.median(runs[1:]))
    per_item = {name: min(values) / len(items) * 1e6 for name, values in timings.items()}
    first = {name: min(values) / len(items) * 1e6 for name, values in first_runs.items()}
    print(f"{len(items)} items of one real Harness run (tool_rounds={args.tool_rounds}, words={args.words}), "
          f"best of {args.runs} rounds, each the median run after the first (each case at least {args.repeat} runs "
          f"and {args.min_seconds} s a round), microseconds per item")
    print(f"{'figure':<16} {'reference':>10} {'a13n_stream_rs':>15} {'ratio':>8}   first run of a round")
    for name, baseline in (("live loop", "reference live loop"), ("fold_line", "reference live loop"),
                           ("replay", "reference live loop + export")):
        theirs_us, ours_us = per_item[baseline], per_item[name]
        cold = first[baseline] / first[name]
        print(f"{name:<16} {theirs_us:>10.1f} {ours_us:>15.2f} {theirs_us / ours_us:>7.1f}x   {cold:.1f}x "
              f"({first[baseline]:.1f} / {first[name]:.2f})")


def timed_runs(case: Callable[[], float], repeat: int, min_seconds: float) -> list[float]:
    """Run `case` back to back at least `repeat` times and until the runs took `min_seconds`: each run's time."""
    runs: list[float] = []
    while len(runs) < repeat or sum(runs) < min_seconds:
        runs.append(case())
    return runs


if __name__ == "__main__":
    main()

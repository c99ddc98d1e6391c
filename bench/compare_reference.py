"""Measure the Python reference on the streams `a13n-stream bench` generates, and print both sides.

usage (with the oracle Python of ../shared/conformance/oracle/setup.sh, which has a13n-stream-protocol 0.21.0):
    cargo build --release -p a13n-stream
    ~/.cache/a13n-oracle/venv/bin/python bench/compare_reference.py [--binary target/release/a13n-stream]
        [--sizes 10000,100000] [--kinds text,short,tools,subagents] [--runs 3] [--processes 3]

Both sides read the same generated lines (`a13n-stream bench --emit KIND N`), and each figure's two sides are
measured back to back (the machine's speed drifts over minutes). The reference is timed on native
objects built beforehand, so its figures exclude JSON decoding and serialization that the Rust figures include:
the comparison favours the reference. The terminal result of each stream becomes a cancelled result on the
Python side (a completed one needs a live Harness state); that is one line of every stream.

Both sides are measured the same way: each figure is the median over `--processes` separate processes of that
side, each process reporting the median of its `--runs` timed runs (after a warm-up). On a shared virtual machine
a whole process sometimes runs at about half speed, so one process decides nothing; the two sides' processes
alternate, so a slow minute falls on both. The reference's processes are this script run again with `--child`
(its native objects built before the timed part, as a host holding them would have them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from datetime import datetime
from typing import Any

from a13n_harness import HarnessEvent, HarnessExtensionEvent, HarnessRunResultEvent
from a13n_harness.result import HarnessRunResult
from a13n_harness.usage import RunUsageSummary
import a13n_harness.events  # noqa: F401  (registers the Harness capability events)
from a13n_stream_protocol import HarnessAguiStreamObserver
from a13n_stream_protocol.display import DisplayFold, DisplaySnapshot
from pydantic import TypeAdapter
from pydantic_ai.messages import AgentStreamEvent

EVENT = TypeAdapter(AgentStreamEvent)


def to_item(line: str) -> Any:
    data = json.loads(line)
    occurred = datetime.fromisoformat(data["occurred_at"])
    common = {"thread_id": data["thread_id"], "run_id": data["run_id"], "sequence": data["sequence"], "occurred_at": occurred}
    if "event" in data:
        raw = data["event"]
        event = EVENT.validate_python(raw) if "event_kind" in raw else HarnessExtensionEvent.model_validate(raw)
        return HarnessEvent(**common, event=event)
    usage = data["result"]["usage"]
    counts = {key: usage[key] for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")}
    result = HarnessRunResult(
        thread_id=data["thread_id"], run_id=data["run_id"], status="cancelled", output=None, state=None,
        usage=RunUsageSummary(**counts),
    )
    return HarnessRunResultEvent(**common, result=result)


def emit(binary: str, kind: str, size: int) -> list[str]:
    out = subprocess.run([binary, "bench", "--emit", kind, str(size)], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def timed(runs: int, work) -> float:
    """The median of `runs` timed runs, after a warm-up."""
    work()  # warm-up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def observe(items: list[Any]) -> None:
    observer = HarnessAguiStreamObserver(retain_events=False)
    for item in items:
        try:
            observer.observe(item)
        except ValueError:
            pass


def fold(items: list[Any]) -> DisplayFold:
    display = DisplayFold(items[0].run_id)
    for item in items:
        try:
            display.fold(display.events(item), item)
        except ValueError:
            pass
    return display


def child(binary: str, figure: str, size: int, runs: int) -> dict[str, float]:
    """One reference process's figures, items per second, each the median of `runs` runs: observe and fold of the
    generated stream `figure`/`size`, or for `checkpoint` export and restore of the bench's three tools displays."""
    if figure == "checkpoint":
        figures = {}
        for display_size in (64, 1024, 4096):
            # The same display the Rust bench builds: a tools stream of (items * 16) / 3 + 2 lines.
            display = fold([to_item(line) for line in emit(binary, "tools", display_size * 16 // 3 + 2)])
            count = len(display.items)
            text = display.export().model_dump_json()
            figures[f"export/{display_size}"] = count / timed(runs, lambda: display.export().model_dump_json())
            figures[f"restore/{display_size}"] = count / timed(
                runs, lambda: DisplayFold.restore(DisplaySnapshot.model_validate_json(text))
            )
        return figures
    items = [to_item(line) for line in emit(binary, figure, size)]
    return {
        f"observe/{figure}/{size}": size / timed(runs, lambda: observe(items)),
        f"fold/{figure}/{size}": size / timed(runs, lambda: fold(items)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(Path(__file__).resolve().parent.parent / "target/release/a13n-stream"))
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--kinds", default="text,short,tools,subagents")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per process (the median counts)")
    parser.add_argument("--processes", type=int, default=3, help="processes per side and figure (the median counts)")
    parser.add_argument("--child", nargs=3, metavar=("FIGURE", "SIZE", "RUNS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        figure, size, runs = args.child
        print(json.dumps(child(args.binary, figure, int(size), int(runs))))
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    kinds = args.kinds.split(",")
    processes, runs = max(args.processes, 1), max(args.runs, 1)
    samples: dict[str, dict[str, list[float]]] = {"rust": {}, "python": {}}

    def runs_for(size: int) -> int:
        # The reference's subagents stream takes minutes a run at 100k items: one run a process there, both sides.
        return 1 if size >= 100_000 else runs

    def measure_rust(size: int, kind: str, figures: tuple[str, ...]) -> None:
        """One bench process; of its figures, those named with one of the prefixes `figures`."""
        command = [args.binary, "bench", "--json", "--sizes", str(size), "--kinds", kind, "--runs", str(runs_for(size))]
        for line in subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines():
            figure = json.loads(line)
            if figure["seconds"] > 0 and figure["name"].startswith(figures):
                samples["rust"].setdefault(figure["name"], []).append(figure["items_per_second"])

    def measure_python(figure: str, size: int) -> None:
        child_runs = runs if figure == "checkpoint" else runs_for(size)
        command = [sys.executable, __file__, "--binary", args.binary, "--child", figure, str(size), str(child_runs)]
        result = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        for name, value in json.loads(result).items():
            samples["python"].setdefault(name, []).append(value)

    # Each figure's processes alternate between the sides, so the machine's drift over minutes falls on both.
    for size in sizes:
        for kind in kinds:
            for _ in range(processes):
                measure_rust(size, kind, ("observe/", "fold/"))
                measure_python(kind, size)
            print(f"measured {kind}/{size}", file=sys.stderr)
    # The bench's checkpoint figures (export and restore of three tools displays) come with its tools stream.
    for _ in range(processes):
        measure_rust(min(sizes), "tools", ("export/", "restore/"))
        measure_python("checkpoint", 0)
    print("measured the checkpoints", file=sys.stderr)

    print(f"each figure the median of {processes} processes a side, each the median of {runs} runs (1 at 100k items)")
    print(f"{'figure':<28} {'reference items/s':>18} {'a13n-stream items/s':>20} {'ratio':>9}")
    for name, values in samples["python"].items():
        ours = samples["rust"].get(name)
        if not ours:
            continue
        reference, mine = statistics.median(values), statistics.median(ours)
        print(f"{name:<28} {reference:>18,.0f} {mine:>20,.0f} {mine / reference:>8.1f}x")


if __name__ == "__main__":
    main()

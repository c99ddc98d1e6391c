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

Each side reports its fastest measurement. On a shared virtual machine a whole process sometimes runs at about
half speed (a plain Python loop shows it as much as a Rust bench), so this project's figures are the fastest of
`--processes` bench processes (each the median of its runs), and the reference's are its fastest run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
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
    """The fastest of `runs` timed runs, after a warm-up."""
    work()  # warm-up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return min(samples)


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/release/a13n-stream")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--kinds", default="text,short,tools,subagents")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--processes", type=int, default=3, help="bench processes per figure (the fastest counts)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    kinds = args.kinds.split(",")

    # The machine's speed drifts over minutes, so each figure's two sides are measured back to back: this
    # project's bench for one shape and size, then the reference on the same stream.
    rust: dict[str, float] = {}

    def measure_rust(size: int, kind: str) -> None:
        command = [args.binary, "bench", "--json", "--sizes", str(size), "--kinds", kind, "--runs", str(args.runs)]
        for _ in range(max(args.processes, 1)):
            for line in subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines():
                figure = json.loads(line)
                if figure["seconds"] > 0:
                    name = figure["name"]
                    rust[name] = max(rust.get(name, 0.0), figure["items_per_second"])

    python: dict[str, float] = {}
    for size in sizes:
        for kind in kinds:
            items = [to_item(line) for line in emit(args.binary, kind, size)]
            runs = 1 if size >= 100_000 else args.runs
            measure_rust(size, kind)
            python[f"observe/{kind}/{size}"] = size / timed(runs, lambda: observe(items))
            python[f"fold/{kind}/{size}"] = size / timed(runs, lambda: fold(items))
            print(f"measured the reference on {kind}/{size}", file=sys.stderr)
    # The bench's checkpoint figures (export and restore of tools displays), measured again just before the
    # reference's.
    measure_rust(min(sizes), "tools")
    for display_size in (64, 1024, 4096):
        # The same display the Rust bench builds: a tools stream of (items * 16) / 3 + 2 lines.
        lines = emit(args.binary, "tools", display_size * 16 // 3 + 2)
        display = fold([to_item(line) for line in lines])
        count = len(display.items)
        text = display.export().model_dump_json()
        python[f"export/{display_size}"] = count / timed(max(args.runs, 5), lambda: display.export().model_dump_json())
        python[f"restore/{display_size}"] = count / timed(
            max(args.runs, 5), lambda: DisplayFold.restore(DisplaySnapshot.model_validate_json(text))
        )

    print(f"{'figure':<28} {'reference items/s':>18} {'a13n-stream items/s':>20} {'ratio':>9}")
    for name, reference in python.items():
        ours = rust.get(name)
        if ours is None:
            continue
        print(f"{name:<28} {reference:>18,.0f} {ours:>20,.0f} {ours / reference:>8.1f}x")


if __name__ == "__main__":
    main()

"""End to end on one journal file: the CLI's `observe` and `fold` against the reference doing the same work in Python.

usage (a Python >= 3.13 with a13n-stream-protocol 0.21.0 and a13n-harness 0.21.0):
    cargo build --release -p a13n-stream
    python bench/compare_cli.py JOURNAL [--binary target/release/a13n-stream] [--processes 5]

Any journal in the wire form works: a real Harness run (`examples/python/harness_run.py`), a recorded case's
`input.jsonl`, lines in another layout. Each side runs as `--processes` separate processes, alternating, and a
figure is each side's median (the same statistic on both sides). A process does the whole job from the file on:
- observe: the CLI's `observe JOURNAL` (AG-UI events, one JSON line each) against Python reading the file,
  validating each line into the Harness's objects, `observe` on each, and writing each event's JSON;
- fold: the CLI's `fold JOURNAL --observed OBSERVED --export CHECKPOINT` (an observed line a source line, then the checkpoint)
  against Python reading and validating as above, `fold(events(item), item)` on each, writing each line's
  observed entries, then the export's JSON.
The reference side's terminal result becomes a cancelled one (see bench/compare_reference.py). Output goes to
files in a temporary directory on both sides. The CLI is timed as a whole process; the reference from after its
imports (Python and Pydantic start in about a second), which favours the reference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_reference import to_item
from a13n_stream_protocol import HarnessAguiStreamObserver
from a13n_stream_protocol.display import DisplayFold


def reference(job: str, journal: Path, out: Path) -> None:
    """The reference's whole job on `journal`, written to `out`."""
    with journal.open() as lines, out.open("w") as sink:
        if job == "observe":
            observer = HarnessAguiStreamObserver(retain_events=False)
            for line in lines:
                try:
                    events = observer.observe(to_item(line))
                except ValueError:
                    continue
                for event in events:
                    sink.write(event.model_dump_json(by_alias=True, exclude_none=True) + "\n")
            return
        display = None
        for line in lines:
            item = to_item(line)
            display = display or DisplayFold(item.run_id)
            try:
                observed = display.fold(display.events(item), item)
            except ValueError:
                observed = []
            sink.write(json.dumps({"observed": [o.model_dump(mode="json") for o in observed]}) + "\n")
        if display is not None:
            sink.write(display.export().model_dump_json() + "\n")


def seconds(command: list[str], stdout: Path) -> float:
    """The CLI's whole process, its standard output written to `stdout` (a file, as the reference writes one)."""
    with stdout.open("w") as sink:
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=sink)
        return time.perf_counter() - start


def reference_seconds(command: list[str]) -> float:
    """What the reference's child reports: its job's time, after its imports."""
    return float(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("journal", type=Path)
    parser.add_argument("--binary", default=str(Path(__file__).resolve().parent.parent / "target/release/a13n-stream"))
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("JOB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        start = time.perf_counter()
        reference(args.child[0], args.journal, Path(args.child[1]))
        print(time.perf_counter() - start)
        return
    count = sum(1 for line in args.journal.open() if line.strip())
    print(f"{args.journal}: {count} lines, {args.processes} processes a side, the median of each side")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        jobs = {
            "observe": [args.binary, "observe", str(args.journal)],
            "fold": [args.binary, "fold", str(args.journal), "--observed", str(out / "observed"),
                     "--export", str(out / "checkpoint")],
        }
        for job, ours in jobs.items():
            theirs = [sys.executable, __file__, str(args.journal), "--child", job, str(out / f"reference-{job}")]
            rust, python = [], []
            for _ in range(args.processes):
                python.append(reference_seconds(theirs))
                rust.append(seconds(ours, out / f"a13n-stream-{job}"))
            r, p = statistics.median(rust), statistics.median(python)
            print(f"{job:8} reference {p:8.3f} s ({count / p:9,.0f} lines/s)   a13n-stream {r:8.4f} s "
                  f"({count / r:11,.0f} lines/s)   {p / r:7.1f}x")


if __name__ == "__main__":
    main()

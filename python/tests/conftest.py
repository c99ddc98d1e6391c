"""Where the conformance corpus is, the named processors its cases use, and real Harness runs' native items."""

from __future__ import annotations

import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
# The recorder of the shared corpus (scenarios.py, harness_json.py), beside the checkout as the corpus is.
ORACLE = Path(os.environ.get("A13N_CONFORMANCE_ORACLE", REPO.parent / "shared" / "conformance" / "oracle"))


def corpus_roots() -> list[Path]:
    """The shared corpus beside the checkout (or A13N_CONFORMANCE_CASES) and the repository's own cases."""
    shared = Path(os.environ.get("A13N_CONFORMANCE_CASES", REPO.parent / "shared" / "conformance" / "cases"))
    return [shared, REPO / "tests" / "cases"]


def case_dirs() -> list[Path]:
    cases = []
    for root in corpus_roots():
        if root.is_dir():
            cases.extend(sorted(path for path in root.iterdir() if (path / "case.json").is_file()))
    return cases


# The named processors are written over JSON dicts (the wire form): pass them as `json_processor=`.


def drop_usage(source: dict, event: dict) -> Optional[dict]:
    if event["type"] == "CUSTOM" and event["name"] in ("a13n.harness.usage", "a13n.harness.diagnostic"):
        return None
    return event


def redact_text(source: dict, event: dict) -> Optional[dict]:
    if event["type"] == "TEXT_MESSAGE_CONTENT":
        event["delta"] = "*" * len(event["delta"])
    return event


def bad_structural(source: dict, event: dict) -> Optional[dict]:
    if event["type"] == "TEXT_MESSAGE_START":
        event["messageId"] = "rewritten"
    return event


def bad_type(source: dict, event: dict) -> Optional[dict]:
    if event["type"] == "TOOL_CALL_START":
        return {"type": "CUSTOM", "name": "replaced", "value": None, "timestamp": event.get("timestamp")}
    return event


PROCESSORS: dict[str, Callable[[dict, dict], Optional[dict]]] = {
    "drop_usage": drop_usage,
    "redact_text": redact_text,
    "bad_structural": bad_structural,
    "bad_type": bad_type,
}


class Case:
    """One recorded case: its options, input lines and the reference's recorded outputs."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.options: dict[str, Any] = json.loads((path / "case.json").read_text())
        self.agui_only = bool(self.options.get("agui_only"))
        name = "events.jsonl" if self.agui_only else "source.jsonl"
        self.lines = self.read_lines(name)
        self.observed = self.read_lines("observed.jsonl")
        self.agui = [] if self.agui_only else self.read_lines("agui.jsonl")
        self.display = (path / "display.json").read_text().rstrip("\n")
        self.cuts: list[int] = self.options.get("cuts", [])

    def read_lines(self, name: str) -> list[str]:
        return [line for line in (self.path / name).read_text().split("\n") if line.strip()]

    def cut(self, k: int, kind: str) -> str:
        return (self.path / "cuts" / f"{k}.{kind}.json").read_text().rstrip("\n")

    @property
    def processor(self) -> Optional[Callable[[dict, dict], Optional[dict]]]:
        name = self.options.get("processor")
        return None if name is None else PROCESSORS[name]

    @property
    def run_id(self) -> str:
        if self.agui_only:
            return self.options["run_id"]
        return json.loads(self.lines[0])["run_id"]

    def fold_options(self) -> dict[str, Any]:
        return {
            "full_content": bool(self.options.get("full_content")),
            "retain_content": bool(self.options.get("retain_content")),
            "json_processor": self.processor,
        }


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`case`: every recorded case; `source_case`: those with Harness source lines; `agui_case`: those of AG-UI
    events fed straight to a fold; `plain_case`: source cases without a processor whose every line folds."""
    kinds = {
        "case": lambda case: True,
        "source_case": lambda case: not case.agui_only,
        "agui_case": lambda case: case.agui_only,
        "plain_case": lambda case: not case.agui_only
        and case.processor is None
        and not any(line.startswith('{"error"') for line in case.observed + case.agui),
    }
    for name, keep in kinds.items():
        if name not in metafunc.fixturenames:
            continue
        paths = case_dirs()
        if not paths:
            raise pytest.UsageError(
                "no conformance cases found: put the shared corpus beside the checkout or set A13N_CONFORMANCE_CASES"
            )
        cases = [case for case in map(Case, paths) if keep(case)]
        metafunc.parametrize(name, cases, ids=[case.path.name for case in cases])


# ---------------------------------------------------------------- native items of real offline Harness runs

# The runs every native-item test is given: two of examples/python/harness_run.py's real offline runs and the
# error stream below (`synthetic_errors`); then, where the recorder is beside the checkout (as in CI), its
# scenarios: real runs of each shape (thinking, tool retries, structured output, media, approval, a model error, a
# subagent, large values) and the synthetic edge and error streams (part kind and identity changes, another
# thread, inline children, observations).
REAL_RUNS = ["real-run-0", "real-run-1", "local-errors"]
SCENARIO_RUNS = [
    "real-chat-thinking",
    "real-tools-retry",
    "real-structured-output",
    "real-multimodal",
    "real-approval",
    "real-model-error",
    "real-subagent",
    "real-large",
    "synth-edge-parts",
    "synth-errors",
    "synth-observations",
    "synth-subagents",
]
NATIVE_RUN_NAMES = REAL_RUNS + (SCENARIO_RUNS if (ORACLE / "scenarios.py").is_file() else [])


def _make_native_runs() -> dict[str, list[Any]]:
    sys.path.insert(0, str(REPO / "examples" / "python"))
    from harness_run import real_run

    runs: dict[str, list[Any]] = {
        "real-run-0": real_run(0),
        "real-run-1": real_run(1, tool_rounds=6, words=80),
        "local-errors": synthetic_errors(),
    }
    if NATIVE_RUN_NAMES == REAL_RUNS:
        return runs
    sys.path.insert(0, str(ORACLE))
    import scenarios

    makers: dict[str, Callable[[], list[Any]]] = {
        "real-chat-thinking": lambda: scenarios.real_chat(random.Random(1), thinking=True, words=50),
        "real-tools-retry": lambda: scenarios.real_tools(random.Random(2), calls=3, retry=True),
        "real-structured-output": lambda: scenarios.real_tools(random.Random(3), calls=1, retry=False, structured=True),
        "real-multimodal": lambda: scenarios.real_multimodal(random.Random(4)),
        "real-approval": lambda: scenarios.real_approval(random.Random(5)),
        "real-model-error": lambda: scenarios.real_model_error(random.Random(6)),
        "real-subagent": lambda: scenarios.real_subagent(random.Random(7)),
        "real-large": lambda: scenarios.real_large(random.Random(8)),
        "synth-edge-parts": scenarios.synth_edge_parts,
        "synth-errors": scenarios.synth_errors,
        "synth-observations": scenarios.synth_observations,
        "synth-subagents": scenarios.synth_subagents,
    }
    for name in SCENARIO_RUNS:
        runs[name] = makers[name]()
    return runs


def synthetic_errors() -> list[Any]:
    """Native items the observers reject (the recorder's `synth-errors` stream, and more): a part kind change
    before its end, a tool-call identity change, an item of another thread, one of another run (a child for the
    stream observer), an inline delegation whose payload fails its model."""
    from a13n_harness import HarnessEvent, HarnessExtensionEvent
    from pydantic_ai.messages import (
        PartDeltaEvent,
        PartEndEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ThinkingPart,
        ThinkingPartDelta,
        ToolCallPartDelta,
    )

    clock = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=timezone.utc)
    items: list[Any] = []

    def add(event: Any, thread_id: str = "thread-s", run_id: str = "run-s") -> None:
        at = clock + timedelta(microseconds=1001 * (len(items) + 1))
        items.append(
            HarnessEvent(thread_id=thread_id, run_id=run_id, sequence=len(items), occurred_at=at, event=event)
        )

    add(HarnessExtensionEvent(kind="lifecycle", payload={"type": "run_started"}))
    add(PartStartEvent(index=0, part=TextPart(content="a")))
    add(PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta="b")))
    add(PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="c")))
    add(PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta="{", tool_call_id="t-1")))
    add(PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta="}", tool_call_id="t-2")))
    add(PartEndEvent(index=0, part=ThinkingPart(content="x")))
    add(PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="d")), thread_id="other-thread")
    add(PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="e")), run_id="run-other")
    add(HarnessExtensionEvent(kind="delegation", payload={"type": "inline_delegation", "action": "bogus"}))
    add(PartEndEvent(index=0, part=TextPart(content="acde")))
    return items


@pytest.fixture(scope="session")
def native_runs() -> dict[str, list[Any]]:
    """Run name (NATIVE_RUN_NAMES) -> the native items its stream yielded (`HarnessEvent`s, then the
    `HarnessRunResultEvent`), made once per session: tests that compare two ways of consuming a run give both the
    SAME objects (the Harness's ids and clock differ on every run)."""
    pytest.importorskip("a13n_harness", reason="native Harness items need a13n-harness==0.21.0 (Python >= 3.13)")
    return _make_native_runs()

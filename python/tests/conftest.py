"""Where the conformance corpus is, and the named processors its cases use."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]


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
            "processor": self.processor,
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

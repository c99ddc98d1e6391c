"""The whole conformance corpus through the Python API: every line and checkpoint byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a13n_stream_rs import (
    AguiObservationError,
    DisplayFold,
    HarnessAguiStreamObserver,
    InputError,
    ValidationError,
    replay,
)


def dumps(value: Any) -> str:
    """How the recording wrote each line: Python's json.dumps, UTF-8, compact."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_line(error: Exception) -> str:
    kind = {AguiObservationError: "AguiObservationError", ValidationError: "ValidationError"}.get(
        type(error), "InputError"
    )
    return dumps({"error": {"type": kind, "message": str(error)}})


def observe_line(observer: HarnessAguiStreamObserver, line: str) -> str:
    try:
        return dumps({"events": observer.observe(line)})
    except (AguiObservationError, ValidationError, InputError) as error:
        return error_line(error)


def fold_source_line(fold: DisplayFold, line: str) -> str:
    try:
        return fold.fold_line(line)
    except (AguiObservationError, ValidationError, InputError) as error:
        return error_line(error)


def fold_event_line(fold: DisplayFold, line: str) -> str:
    try:
        return dumps({"observed": fold.fold([json.loads(line)])})
    except (AguiObservationError, ValidationError, InputError) as error:
        return error_line(error)


def fold_all(fold: DisplayFold, case: Any, lines: list[str]) -> list[str]:
    step = fold_event_line if case.agui_only else fold_source_line
    return [step(fold, line) for line in lines]


def test_observer_lines(source_case: Any) -> None:
    case = source_case
    observer = HarnessAguiStreamObserver(processor=case.processor)
    got = [observe_line(observer, line) for line in case.lines]
    assert got == case.agui
    # observe_json writes the same events as JSON text.
    observer = HarnessAguiStreamObserver(processor=case.processor)
    for line, recorded in zip(case.lines, case.agui):
        expected = json.loads(recorded)
        try:
            texts = observer.observe_json(line)
        except (AguiObservationError, ValidationError, InputError):
            assert "error" in expected
            continue
        assert [json.loads(text) for text in texts] == expected["events"]


def test_display_lines_and_checkpoint(case: Any) -> None:
    fold = DisplayFold(case.run_id, **case.fold_options())
    assert fold_all(fold, case, case.lines) == case.observed
    assert fold.export() == case.display
    if not case.agui_only:
        batch = DisplayFold(case.run_id, **case.fold_options())
        assert batch.fold_lines(case.lines) == case.observed
        assert batch.export() == case.display


def test_replay_is_the_whole_fold(plain_case: Any, tmp_path: Any) -> None:
    case = plain_case
    options = {key: value for key, value in case.fold_options().items() if key != "processor"}
    assert replay(case.lines, **options) == case.display
    journal = tmp_path / "journal.jsonl"
    journal.write_text("\n".join(case.lines) + "\n")
    assert replay(journal, **options) == case.display
    assert replay(str(journal), **options) == case.display


def test_every_cut_exports_restores_and_continues(case: Any) -> None:
    options = case.fold_options()
    for k in case.cuts:
        fold = DisplayFold(case.run_id, **options)
        fold_all(fold, case, case.lines[:k])
        own = fold.export()
        assert own == case.cut(k, "display"), f"cut {k}"
        for checkpoint in (case.cut(k, "display"), own, own.encode()):
            restored = DisplayFold.restore(
                checkpoint, retain_content=options["retain_content"], processor=options["processor"]
            )
            assert fold_all(restored, case, case.lines[k:]) == case.observed[k:], f"cut {k}"
            assert restored.export() == case.display, f"cut {k}"
        if case.agui_only:
            continue
        observer = HarnessAguiStreamObserver(processor=case.processor)
        for line in case.lines[:k]:
            observe_line(observer, line)
        assert observer.export() == case.cut(k, "observer"), f"cut {k}"
        restored_observer = HarnessAguiStreamObserver.restore(case.cut(k, "observer"), processor=case.processor)
        rest = [observe_line(restored_observer, line) for line in case.lines[k:]]
        assert rest == case.agui[k:], f"cut {k}"


def test_resume_rebuilds_the_observer_atomically(source_case: Any) -> None:
    case = source_case
    if any(line.startswith('{"error"') for line in case.agui):
        # A rejected line makes resumption fail as a whole: it is all-or-nothing.
        observer = HarnessAguiStreamObserver(processor=case.processor)
        with pytest.raises((AguiObservationError, ValidationError)):
            observer.resume(case.lines)
        assert observer.run_id is None and observer.event_count == 0
        return
    for k in case.cuts:
        observer = HarnessAguiStreamObserver(processor=case.processor)
        observer.resume(case.lines[:k])
        assert observer.export() == case.cut(k, "observer"), f"cut {k}"
        rest = [observe_line(observer, line) for line in case.lines[k:]]
        assert rest == case.agui[k:], f"cut {k}"

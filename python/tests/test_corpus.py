"""The whole conformance corpus through the Python API: every line and checkpoint byte for byte.

Each recorded line is compared as text with the line this package's API gives, written the way the recorder
(the reference's `oracle/gen.py`) wrote it: the observer's events as `model_dump(mode="json", by_alias=True)`,
the fold's entries as `model_dump(mode="json")`, each line with Python's compact `json.dumps`; checkpoints as
`model_dump_json()` of the exported model. The JSON fast paths (`observe_json`, `fold_line`, `fold_lines`,
`export_json`, `replay`) must write the same bytes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Iterable

import pytest

from a13n_stream_rs import AguiObservationError, HarnessAguiStreamObserver, InputError, ValidationError, replay
from a13n_stream_rs.display import DisplayFold, DisplaySnapshot, ObserverContinuation

# What the recorder caught per item (`except (AguiObservationError, TypeError, ValueError)`): every error of
# this package is a ValueError, and so is Pydantic's ValidationError.
RECORDED_ERRORS = (TypeError, ValueError)


def dumps(value: Any) -> str:
    """How the recording wrote each line: Python's json.dumps, UTF-8, compact."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_line(error: BaseException) -> str:
    """The recorder's error line: the exception's class name and message."""
    return dumps({"error": {"type": type(error).__name__, "message": str(error)}})


def events_line(events: Iterable[Any]) -> str:
    """The recorder's observer line for `ag_ui` event models."""
    return dumps({"events": [event.model_dump(mode="json", by_alias=True) for event in events]})


def observed_line(observed: Iterable[Any]) -> str:
    """The recorder's fold line for `Observed` models."""
    return dumps({"observed": [entry.model_dump(mode="json") for entry in observed]})


def observe_line(observer: Any, line: Any) -> str:
    try:
        return events_line(observer.observe(line))
    except RECORDED_ERRORS as error:
        return error_line(error)


def observe_json_texts(observer: Any, line: Any) -> Any:
    """`observe_json`'s texts, or the error line."""
    try:
        return observer.observe_json(line)
    except RECORDED_ERRORS as error:
        return error_line(error)


def model_json_texts(observer: Any, line: Any) -> Any:
    """What `observe_json` writes, from the models: each event's Pydantic JSON by alias, or the error line."""
    try:
        return [event.model_dump_json(by_alias=True) for event in observer.observe(line)]
    except RECORDED_ERRORS as error:
        return error_line(error)


def fold_source_line(fold: DisplayFold, line: Any) -> str:
    try:
        return fold.fold_line(line)
    except RECORDED_ERRORS as error:
        return error_line(error)


def live_fold_line(fold: DisplayFold, line: Any) -> str:
    """The reference's live loop, `fold.fold(fold.events(source), source)`, as the recorder wrote it."""
    try:
        return observed_line(fold.fold(fold.events(line), line))
    except RECORDED_ERRORS as error:
        return error_line(error)


def fold_event_line(fold: DisplayFold, line: str) -> str:
    try:
        return observed_line(fold.fold([json.loads(line)]))
    except RECORDED_ERRORS as error:
        return error_line(error)


def fold_all(fold: DisplayFold, case: Any, lines: list[str]) -> list[str]:
    step = fold_event_line if case.agui_only else fold_source_line
    return [step(fold, line) for line in lines]


async def history(lines: Iterable[Any]) -> AsyncIterator[Any]:
    for line in lines:
        yield line


def test_observer_lines(source_case: Any) -> None:
    case = source_case
    observer = HarnessAguiStreamObserver(json_processor=case.processor)
    assert [observe_line(observer, line) for line in case.lines] == case.agui
    # observe_json writes the same events as JSON text: each the event model's own JSON byte for byte (Pydantic's
    # number format, not json.dumps's), the same values as the recorded line.
    fast = HarnessAguiStreamObserver(json_processor=case.processor)
    models = HarnessAguiStreamObserver(json_processor=case.processor)
    for line, recorded in zip(case.lines, case.agui):
        texts = observe_json_texts(fast, line)
        assert texts == model_json_texts(models, line)
        if isinstance(texts, str):
            assert texts == recorded
        else:
            assert [json.loads(text) for text in texts] == json.loads(recorded)["events"]


def test_display_lines_and_checkpoint(case: Any) -> None:
    fold = DisplayFold(case.run_id, **case.fold_options())
    assert fold_all(fold, case, case.lines) == case.observed
    assert fold.export_json() == case.display
    assert fold.export().model_dump_json() == case.display
    if not case.agui_only:
        batch = DisplayFold(case.run_id, **case.fold_options())
        assert batch.fold_lines(case.lines) == case.observed
        assert batch.export_json() == case.display


def test_the_live_loop_of_models_writes_the_recorded_lines(source_case: Any) -> None:
    """`fold.fold(fold.events(source), source)`, the reference's own loop, dumped as the recorder dumped it."""
    case = source_case
    fold = DisplayFold(case.run_id, **case.fold_options())
    assert [live_fold_line(fold, line) for line in case.lines] == case.observed
    assert fold.export().model_dump_json() == case.display


def test_replay_is_the_whole_fold(plain_case: Any, tmp_path: Any) -> None:
    case = plain_case
    options = {key: value for key, value in case.fold_options().items() if key != "json_processor"}
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
        own = fold.export_json()
        assert own == case.cut(k, "display"), f"cut {k}"
        assert fold.export().model_dump_json() == own, f"cut {k}"
        recorded = case.cut(k, "display")
        for checkpoint in (recorded, own, own.encode(), fold.export(), DisplaySnapshot.model_validate_json(recorded)):
            restored = DisplayFold.restore(
                checkpoint, retain_content=options["retain_content"], json_processor=options["json_processor"]
            )
            assert fold_all(restored, case, case.lines[k:]) == case.observed[k:], f"cut {k}"
            assert restored.export_json() == case.display, f"cut {k}"
        if case.agui_only:
            continue
        observer = HarnessAguiStreamObserver(json_processor=case.processor)
        for line in case.lines[:k]:
            observe_line(observer, line)
        assert observer.export_json() == case.cut(k, "observer"), f"cut {k}"
        assert observer.export().model_dump_json() == case.cut(k, "observer"), f"cut {k}"
        saved = case.cut(k, "observer")
        for continuation in (saved, ObserverContinuation.model_validate_json(saved), observer.export()):
            restored_observer = HarnessAguiStreamObserver.restore(continuation, json_processor=case.processor)
            rest = [observe_line(restored_observer, line) for line in case.lines[k:]]
            assert rest == case.agui[k:], f"cut {k}"


def test_resume_rebuilds_the_observer_atomically(source_case: Any) -> None:
    case = source_case
    fresh = HarnessAguiStreamObserver().export_json()
    if any(line.startswith('{"error"') for line in case.agui):
        # A rejected line makes resumption fail as a whole: it is all-or-nothing.
        for resume in (
            lambda observer: observer.resume_lines(case.lines),
            lambda observer: asyncio.run(observer.resume(history(case.lines))),
        ):
            observer = HarnessAguiStreamObserver(json_processor=case.processor)
            with pytest.raises((AguiObservationError, ValidationError, InputError, ValueError)):
                resume(observer)
            assert observer.run_id is None and observer.event_count == 0
            assert observer.export_json() == fresh
        return
    for k in case.cuts:
        for awaited in (False, True):
            observer = HarnessAguiStreamObserver(json_processor=case.processor)
            if awaited:
                assert asyncio.run(observer.resume(history(case.lines[:k]))) is None
            else:
                assert observer.resume_lines(case.lines[:k]) is None
            assert observer.export_json() == case.cut(k, "observer"), f"cut {k}"
            # resume() does not republish history, but retains it for snapshot().
            assert observer.event_count == sum(len(json.loads(line)["events"]) for line in case.agui[:k])
            rest = [observe_line(observer, line) for line in case.lines[k:]]
            assert rest == case.agui[k:], f"cut {k}"

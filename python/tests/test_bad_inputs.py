"""Bad input, misuse and failing processors: a clear error naming what is wrong, and nothing changed."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator

import pytest

from a13n_stream_rs import (
    AguiObservationError,
    CustomEventAssembler,
    DisplayFold,
    HarnessAguiObserver,
    HarnessAguiStreamObserver,
    InputError,
    fragment_custom_event,
    replay,
    tool_result_content,
)

RUN_STARTED = (
    '{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00",'
    '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}'
)
TEXT_START = (
    '{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00",'
    '"event":{"index":0,"part":{"content":"Hel","id":null,"part_kind":"text"},"event_kind":"part_start"}}'
)
TEXT_DELTA = (
    '{"thread_id":"t","run_id":"r","sequence":2,"occurred_at":"2026-11-29T12:00:02+00:00",'
    '"event":{"index":0,"delta":{"content_delta":"lo","part_delta_kind":"text"},"event_kind":"part_delta"}}'
)


def test_malformed_lines_raise_input_errors_naming_the_field_and_change_nothing() -> None:
    fold = DisplayFold("r")
    fold.fold_line(RUN_STARTED)
    before = fold.export()
    with pytest.raises(InputError, match="invalid JSON|expected"):
        fold.fold_line("{not json")
    with pytest.raises(InputError, match="UTF-8"):
        fold.fold_line(b"\xff\xfe")
    with pytest.raises(InputError, match="sequence"):
        fold.fold_line(TEXT_START.replace('"sequence":1', '"sequence":"one"'))
    with pytest.raises(TypeError):
        fold.fold_line(42)
    assert fold.export() == before
    assert fold.position == {"attempt": 0, "sequence": 1}


def test_a_line_may_be_str_bytes_or_dict() -> None:
    outputs = []
    for form in (lambda line: line, str.encode, json.loads):
        fold = DisplayFold("r")
        outputs.append([fold.fold_line(form(line)) for line in (RUN_STARTED, TEXT_START, TEXT_DELTA)])
    assert outputs[0] == outputs[1] == outputs[2]


def test_a_rejected_item_raises_the_reference_error_and_commits_nothing() -> None:
    observer = HarnessAguiObserver()
    observer.observe(RUN_STARTED)
    other_run = RUN_STARTED.replace('"run_id":"r"', '"run_id":"other"').replace('"sequence":0', '"sequence":1')
    with pytest.raises(AguiObservationError, match="Harness Run correlation changed within one observer"):
        observer.observe(other_run)
    assert observer.run_id == "r" and observer.event_count == 1


def test_a_processor_exception_is_raised_again_and_nothing_is_committed() -> None:
    class Refused(Exception):
        pass

    calls = []

    def processor(source: dict, event: dict) -> dict:
        calls.append(event["type"])
        if event["type"] == "TEXT_MESSAGE_START":
            raise Refused("no text today")
        return event

    for make in (lambda: DisplayFold("r", processor=processor), lambda: HarnessAguiStreamObserver(processor=processor)):
        target = make()
        step = target.fold_line if isinstance(target, DisplayFold) else target.observe
        step(RUN_STARTED)
        before = target.export()
        with pytest.raises(Refused, match="no text today"):
            step(TEXT_START)
        assert target.export() == before
    assert "TEXT_MESSAGE_START" in calls


def test_a_processor_returning_no_event_or_changing_structure_is_rejected() -> None:
    cases = [
        (lambda source, event: 5, "The event processor returned a non-AG-UI value"),
        (lambda source, event: {**event, "delta": 7}, "The event processor returned an invalid AG-UI event"),
        (lambda source, event: {**event, "type": "CUSTOM", "name": "x", "value": None}, "changed the AG-UI event type"),
        (lambda source, event: {**event, "messageId": "m"}, "changed structural field message_id"),
    ]
    for processor, message in cases:
        observer = HarnessAguiStreamObserver(
            processor=lambda source, event, p=processor: p(source, event) if "messageId" in event else event
        )
        observer.observe(RUN_STARTED)
        with pytest.raises(AguiObservationError, match=message):
            observer.observe(TEXT_START)
        assert observer.event_count == 1


def test_a_processor_may_drop_or_rewrite_mutable_fields() -> None:
    def shout(source: dict, event: dict) -> Any:
        assert source["run_id"] == "r"
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            return {**event, "delta": event["delta"].upper()}
        return None if event["type"] == "CUSTOM" else event

    request = RUN_STARTED.replace(
        '"payload":{"type":"run_started"}',
        '"payload":{"type":"model_request_started","request_id":"q","request_index":0,"message_count":1}',
    )
    plain = HarnessAguiStreamObserver().observe(request)
    observer = HarnessAguiStreamObserver(processor=shout)
    kept = observer.observe(request)
    assert any(event["type"] == "CUSTOM" for event in plain)
    assert kept == [event for event in plain if event["type"] != "CUSTOM"]
    observer.observe(TEXT_START)
    events = observer.observe(TEXT_DELTA)
    assert [event["delta"] for event in events if event["type"] == "TEXT_MESSAGE_CONTENT"] == ["LO"]


def test_snapshots_and_resumption_are_used_as_the_reference_allows() -> None:
    live = HarnessAguiStreamObserver(retain_events=False)
    live.observe(RUN_STARTED)
    with pytest.raises(AguiObservationError, match="Snapshots require retain_events=True"):
        live.snapshot()
    observer = HarnessAguiStreamObserver()
    observer.observe(RUN_STARTED)
    assert observer.snapshot(start=0, stop=observer.event_count)[0]["type"] == "RUN_STARTED"
    with pytest.raises(ValueError, match="outside"):
        observer.snapshot(start=0, stop=99)
    with pytest.raises(AguiObservationError, match="requires a fresh observer"):
        observer.resume([RUN_STARTED])
    fresh = HarnessAguiStreamObserver()
    with pytest.raises(InputError, match="line 2"):
        fresh.resume([RUN_STARTED, "{broken"])
    assert fresh.run_id is None
    fresh.resume([RUN_STARTED, TEXT_START])
    assert fresh.run_id == "r" and fresh.event_count == 3


def test_aresume_is_atomic() -> None:
    async def history(fail: bool) -> AsyncIterator[str]:
        yield RUN_STARTED
        if fail:
            raise RuntimeError("journal read failed")
        yield TEXT_START

    observer = HarnessAguiStreamObserver()
    with pytest.raises(RuntimeError, match="journal read failed"):
        asyncio.run(observer.aresume(history(True)))
    assert observer.run_id is None and observer.event_count == 0
    asyncio.run(observer.aresume(history(False)))
    assert observer.run_id == "r"
    with pytest.raises(TypeError):
        asyncio.run(HarnessAguiStreamObserver().aresume([RUN_STARTED]))


def test_checkpoints_are_checked() -> None:
    with pytest.raises(InputError, match="checkpoint"):
        DisplayFold.restore("{}")
    with pytest.raises(TypeError):
        DisplayFold.restore(42)

    class Model:
        def model_dump_json(self) -> str:
            fold = DisplayFold("r")
            fold.fold_line(RUN_STARTED)
            return fold.export()

    assert DisplayFold.restore(Model()).position == {"attempt": 0, "sequence": 1}
    with pytest.raises(InputError):
        HarnessAguiStreamObserver.restore('{"thread_id": 5}')


def test_batches_report_rejected_lines_in_place_and_replay_names_the_line() -> None:
    fold = DisplayFold("r")
    results = fold.fold_lines([RUN_STARTED, "{broken", TEXT_START])
    assert results[1].startswith('{"error":{"type":"InputError"')
    assert results[2].startswith('{"observed":[')
    with pytest.raises(TypeError):
        fold.fold_lines(RUN_STARTED)
    with pytest.raises(InputError, match="^line 2: "):
        replay([RUN_STARTED, "{broken", TEXT_START])
    with pytest.raises(InputError, match="No such file"):
        replay("/nonexistent/journal.jsonl")
    assert replay([]).startswith('{"items":[]')


def test_fragments_round_trip() -> None:
    event = {"type": "CUSTOM", "timestamp": 1, "name": "big", "value": {"text": "x" * 300_000}}
    frames = fragment_custom_event(event, identity="big-1")
    assert len(frames) > 1 and all(frame["name"] == "a13n.stream.fragment" for frame in frames)
    assembler = CustomEventAssembler()
    results = [assembler.accept(frame) for frame in frames[:-1]]
    state = assembler.export()
    restored = CustomEventAssembler.restore(state)
    assert results == [None] * (len(frames) - 1)
    assert restored.accept(frames[-1]) == event
    assert not restored.gap
    small = {"type": "CUSTOM", "name": "small", "value": 1}
    assert fragment_custom_event(small, identity="s") == [small]
    with pytest.raises(ValueError, match="positive"):
        CustomEventAssembler(max_bytes=0)
    assert tool_result_content("plain") == "plain"
    assert tool_result_content({"a": 1}) == '{"a":1}'

"""Bad input, misuse and failing processors: a clear error naming what is wrong, and nothing changed."""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import Any, AsyncIterator, Callable, Optional

import pytest
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    EventType,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
)

import a13n_stream_rs
from a13n_stream_rs import (
    AguiObservationError,
    CustomEventAssembler,
    DisplayFold,
    HarnessAguiObserver,
    HarnessAguiStreamObserver,
    InputError,
    ValidationError,
    fragment_custom_event,
    replay,
    tool_result_content,
)
from a13n_stream_rs.display import StreamPosition

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
    with pytest.raises(InputError, match="sequence"):
        fold.events(TEXT_START.replace('"sequence":1', '"sequence":"one"'))
    with pytest.raises(TypeError):
        fold.events(42)
    # Found by helper-62: the message read as a statement ("events[0] is an AG-UI event dict").
    for event, found in [("x", "str"), (1, "int"), (None, "NoneType")]:
        with pytest.raises(TypeError, match=rf"^events\[0\] must be an AG-UI event dict, not {found}$"):
            fold.fold([event])
    assert fold.export() == before
    assert fold.export_json() == before.model_dump_json()
    assert fold.position == StreamPosition(attempt=0, sequence=1)
    assert str(fold.position) == "0-1"


def test_a_line_may_be_str_bytes_or_dict() -> None:
    outputs = []
    for form in (lambda line: line, str.encode, json.loads):
        fold = DisplayFold("r")
        lines = [fold.fold_line(form(line)) for line in (RUN_STARTED, TEXT_START, TEXT_DELTA)]
        live = DisplayFold("r")
        entries = [[entry.model_dump_json() for entry in live.fold(live.events(form(line)), form(line))] for line in
                   (RUN_STARTED, TEXT_START, TEXT_DELTA)]
        observer = HarnessAguiStreamObserver()
        events = [observer.observe_json(form(line)) for line in (RUN_STARTED, TEXT_START, TEXT_DELTA)]
        outputs.append((lines, entries, events, fold.export_json(), live.export_json(), observer.export_json()))
        # The journal form is the model's dump: omitted defaults written, whichever form the line came in.
        assert [a13n_stream_rs.to_source_line(form(line)) for line in (RUN_STARTED, TEXT_START, TEXT_DELTA)] == [
            RUN_STARTED,
            TEXT_START.replace('"id":null,"part_kind"', '"id":null,"provider_name":null,"provider_details":null,'
                               '"citations":null,"part_kind"').replace('},"event_kind"', '},"previous_part_kind":null,"event_kind"'),
            TEXT_DELTA.replace('"part_delta_kind"', '"provider_name":null,"provider_details":null,"citations_delta":null,'
                               '"part_delta_kind"'),
        ]
    assert outputs[0] == outputs[1] == outputs[2]
    assert outputs[0][3] == outputs[0][4]


def test_a_rejected_item_raises_the_reference_error_and_commits_nothing() -> None:
    observer = HarnessAguiObserver()
    observer.observe(RUN_STARTED)
    other_run = RUN_STARTED.replace('"run_id":"r"', '"run_id":"other"').replace('"sequence":0', '"sequence":1')
    with pytest.raises(AguiObservationError, match="Harness Run correlation changed within one observer") as error:
        observer.observe(other_run)
    assert error.value.kind == "run_changed"
    assert observer.run_id == "r" and observer.event_count == 1


def test_a_processor_exception_is_raised_again_and_nothing_is_committed() -> None:
    class Refused(Exception):
        pass

    calls = []

    def json_processor(source: dict, event: dict) -> dict:
        calls.append(event["type"])
        if event["type"] == "TEXT_MESSAGE_START":
            raise Refused("no text today")
        return event

    def processor(source: Any, event: BaseEvent) -> BaseEvent:
        calls.append(event.type.value)
        if isinstance(event, TextMessageStartEvent):
            raise Refused("no text today")
        return event

    makers: list[Callable[[], Any]] = [
        lambda: DisplayFold("r", json_processor=json_processor),
        lambda: HarnessAguiStreamObserver(json_processor=json_processor),
        lambda: DisplayFold("r", processor=processor),
        lambda: HarnessAguiStreamObserver(processor=processor),
    ]
    # Each entry point that converts: a fold's fold_line and events, an observer's observe and observe_json.
    entry_points = {DisplayFold: ("fold_line", "events"), HarnessAguiStreamObserver: ("observe", "observe_json")}
    for make in makers:
        for name in entry_points[type(make())]:
            target = make()
            getattr(target, name)(RUN_STARTED)
            before = target.export_json()
            with pytest.raises(Refused, match="no text today"):
                getattr(target, name)(TEXT_START)
            assert target.export_json() == before
    assert calls.count("TEXT_MESSAGE_START") == 8
    with pytest.raises(ValueError, match="either processor or json_processor"):
        HarnessAguiStreamObserver(processor=processor, json_processor=json_processor)
    with pytest.raises(ValueError, match="either processor or json_processor"):
        DisplayFold("r", processor=processor, json_processor=json_processor)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_a_processor_returning_no_event_or_changing_structure_is_rejected() -> None:
    json_cases = [
        (lambda source, event: 5, "The event processor returned a non-AG-UI value"),
        (lambda source, event: {**event, "delta": 7}, "The event processor returned an invalid AG-UI event"),
        (lambda source, event: {**event, "type": "CUSTOM", "name": "x", "value": None}, "changed the AG-UI event type"),
        (lambda source, event: {**event, "messageId": "m"}, "changed structural field message_id"),
    ]
    for processor, message in json_cases:
        observer = HarnessAguiStreamObserver(
            json_processor=lambda source, event, p=processor: p(source, event) if "messageId" in event else event
        )
        observer.observe(RUN_STARTED)
        with pytest.raises(AguiObservationError, match=message):
            observer.observe(TEXT_START)
        assert observer.event_count == 1
    # The same refusals for a processor of `ag_ui` models (the reference's contract).
    model_cases = [
        (lambda event: 5, "The event processor returned a non-AG-UI value", "rejected"),
        (lambda event: event.model_dump(by_alias=True), "The event processor returned a non-AG-UI value", "rejected"),
        # A field the start event does not declare: the reference reports it as a structural change.
        (
            lambda event: event.model_copy(update={"delta": 7}),
            "changed structural field delta",
            "processor_changed_structure",
        ),
        (
            lambda event: CustomEvent(name="x", value=None, timestamp=event.timestamp),
            "changed the AG-UI event type",
            "rejected",
        ),
        (
            lambda event: event.model_copy(update={"message_id": "m"}),
            "changed structural field message_id",
            "processor_changed_structure",
        ),
        (
            lambda event: event.model_copy(update={"timestamp": 1}),
            "changed structural field timestamp",
            "processor_changed_structure",
        ),
    ]
    for change, message, kind in model_cases:
        observer = HarnessAguiStreamObserver(
            processor=lambda source, event, c=change: c(event) if hasattr(event, "message_id") else event
        )
        observer.observe(RUN_STARTED)
        with pytest.raises(AguiObservationError, match=message) as error:
            observer.observe(TEXT_START)
        assert observer.event_count == 1
        if kind == "processor_changed_structure":
            assert error.value.kind == kind


def test_a_processor_may_drop_or_rewrite_mutable_fields() -> None:
    def shout(source: dict, event: dict) -> Any:
        assert source["run_id"] == "r"
        if event["type"] == "TEXT_MESSAGE_CONTENT":
            return {**event, "delta": event["delta"].upper()}
        return None if event["type"] == "CUSTOM" else event

    sources: list[Any] = []

    def shout_models(source: Any, event: BaseEvent) -> Optional[BaseEvent]:
        sources.append(source)
        if isinstance(event, TextMessageContentEvent):
            return event.model_copy(update={"delta": event.delta.upper()})
        return None if isinstance(event, CustomEvent) else event

    request = RUN_STARTED.replace(
        '"payload":{"type":"run_started"}',
        '"payload":{"type":"model_request_started","request_id":"q","request_index":0,"message_count":1}',
    )
    plain = HarnessAguiStreamObserver().observe(request)
    assert any(event.type == EventType.CUSTOM for event in plain)
    for observer in (HarnessAguiStreamObserver(json_processor=shout), HarnessAguiStreamObserver(processor=shout_models)):
        kept = observer.observe(request)
        assert [event.model_dump_json() for event in kept] == [
            event.model_dump_json() for event in plain if event.type != EventType.CUSTOM
        ]
        observer.observe(TEXT_START)
        events = observer.observe(TEXT_DELTA.encode())
        assert [event.delta for event in events if isinstance(event, TextMessageContentEvent)] == ["LO"]
    # A processor of models receives the source item exactly as the host passed it.
    assert sources[0] is request and sources[-1] == TEXT_DELTA.encode()


def test_snapshots_and_resumption_are_used_as_the_reference_allows() -> None:
    live = HarnessAguiStreamObserver(retain_events=False)
    live.observe(RUN_STARTED)
    with pytest.raises(AguiObservationError, match="Snapshots require retain_events=True") as refused:
        live.snapshot()
    assert refused.value.kind == "events_not_retained"
    observer = HarnessAguiStreamObserver()
    observer.observe(RUN_STARTED)
    snapshot = observer.snapshot(start=0, stop=observer.event_count)
    assert isinstance(snapshot, tuple) and isinstance(snapshot[0], RunStartedEvent)
    with pytest.raises(ValueError, match="outside"):
        observer.snapshot(start=0, stop=99)
    with pytest.raises(AguiObservationError, match="requires a fresh observer") as not_fresh:
        asyncio.run(observer.resume([RUN_STARTED]))
    assert not_fresh.value.kind == "not_fresh"
    with pytest.raises(AguiObservationError, match="requires a fresh observer"):
        observer.resume_lines([RUN_STARTED])
    fresh = HarnessAguiStreamObserver()
    with pytest.raises(InputError, match="line 2") as broken:
        fresh.resume_lines([RUN_STARTED, "{broken"])
    assert broken.value.line == 2 and broken.value.kind == "json"
    assert fresh.run_id is None
    with pytest.raises(InputError):
        asyncio.run(fresh.resume([RUN_STARTED, "{broken"]))
    assert fresh.run_id is None
    fresh.resume_lines([RUN_STARTED, TEXT_START])
    assert fresh.run_id == "r" and fresh.event_count == 3
    awaited = HarnessAguiStreamObserver()
    assert asyncio.run(awaited.resume([RUN_STARTED, TEXT_START])) is None
    assert awaited.export_json() == fresh.export_json()
    assert [event.model_dump_json() for event in awaited.snapshot()] == [
        event.model_dump_json() for event in fresh.snapshot()
    ]
    # A restored observer keeps no event journal.
    restored = HarnessAguiStreamObserver.restore(fresh.export())
    with pytest.raises(AguiObservationError, match="Snapshots require retain_events=True"):
        restored.snapshot()


def test_resume_is_atomic() -> None:
    async def history(fail: bool) -> AsyncIterator[str]:
        yield RUN_STARTED
        if fail:
            raise RuntimeError("journal read failed")
        yield TEXT_START

    fresh = HarnessAguiStreamObserver().export_json()
    observer = HarnessAguiStreamObserver()
    with pytest.raises(RuntimeError, match="journal read failed"):
        asyncio.run(observer.resume(history(True)))
    assert observer.run_id is None and observer.event_count == 0
    assert observer.export_json() == fresh
    asyncio.run(observer.resume(history(False)))
    assert observer.run_id == "r"
    for not_history in (RUN_STARTED, RUN_STARTED.encode(), 42, None):
        with pytest.raises(TypeError):
            asyncio.run(HarnessAguiStreamObserver().resume(not_history))
    with pytest.raises(TypeError):
        HarnessAguiStreamObserver().resume_lines(42)


def test_checkpoints_are_checked() -> None:
    with pytest.raises(InputError, match="checkpoint"):
        DisplayFold.restore("{}")
    with pytest.raises(TypeError):
        DisplayFold.restore(42)

    class Model:
        def model_dump_json(self) -> str:
            fold = DisplayFold("r")
            fold.fold_line(RUN_STARTED)
            return fold.export_json()

    assert str(DisplayFold.restore(Model()).position) == "0-1"
    with pytest.raises(InputError):
        HarnessAguiStreamObserver.restore('{"thread_id": 5}')
    with pytest.raises(TypeError):
        HarnessAguiStreamObserver.restore(42)
    # The constructor's continuation must be of this run, attempt and content policy (the reference's message).
    fold = DisplayFold("r")
    fold.fold_line(RUN_STARTED)
    snapshot = fold.export()
    with pytest.raises(ValueError, match="^Display continuation does not match the run, attempt or content policy$"):
        DisplayFold("other", snapshot.items, continuation=snapshot.continuation)
    with pytest.raises(ValueError, match="^Display continuation does not match"):
        DisplayFold("r", snapshot.items, continuation=snapshot.continuation, full_content=True)
    continued = DisplayFold("r", snapshot.items, continuation=snapshot.continuation)
    assert continued.export_json() == fold.export_json()
    assert str(continued.position) == "0-1" and list(continued.items) == list(fold.items)


def test_batches_report_rejected_lines_in_place_and_replay_names_the_line() -> None:
    fold = DisplayFold("r")
    results = fold.fold_lines([RUN_STARTED, "{broken", TEXT_START])
    assert results[1].startswith('{"error":{"type":"InputError"')
    assert results[2].startswith('{"observed":[')
    with pytest.raises(TypeError):
        fold.fold_lines(RUN_STARTED)
    with pytest.raises(InputError, match="^line 2: ") as error:
        replay([RUN_STARTED, "{broken", TEXT_START])
    assert error.value.line == 2 and error.value.kind == "json"
    with pytest.raises(InputError, match="No such file"):
        replay("/nonexistent/journal.jsonl")
    assert replay([]).startswith('{"items":[]')


def long_journal(deltas: int) -> list[str]:
    """A run start, a text part's start and `deltas` content deltas, each line its own sequence."""
    lines = [RUN_STARTED, TEXT_START]
    for sequence in range(2, deltas + 2):
        lines.append(TEXT_DELTA.replace('"sequence":2,', f'"sequence":{sequence},'))
    return lines


@pytest.mark.parametrize("deltas", [10, 253, 254, 255, 3_000])
def test_replay_of_a_short_or_long_journal_names_the_failing_line(deltas: int) -> None:
    # A journal of 256 lines or more (2 + 254 deltas) is read on a second thread ahead of the fold: the checkpoint,
    # and the line an error names, are the same as folding line by line on one, whether the reader is still
    # reading when a line fails (early) or has read every line (late).
    journal = long_journal(deltas)
    fold = DisplayFold("r")
    for line in journal:
        fold.fold_line(line)
    assert replay(journal) == fold.export_json()
    for broken in (3, len(journal) - 3):
        with pytest.raises(InputError, match=f"^line {broken + 1}: ") as error:
            replay(journal[:broken] + ["{broken"] + journal[broken:])
        assert error.value.line == broken + 1 and error.value.kind == "json"
        other_thread = journal[broken].replace('"thread_id":"t"', '"thread_id":"u"')
        with pytest.raises(AguiObservationError, match="^line [0-9]+: Harness Thread correlation changed") as rejected:
            replay(journal[:broken] + [other_thread] + journal[broken:])
        assert rejected.value.line == broken + 1



def test_replays_on_several_threads_at_once_share_the_reader_and_agree() -> None:
    # Every long replay's lines are read on one kept reader thread: replays started together take it in turn, and
    # each gets its own checkpoint (or its own failing line).
    from concurrent.futures import ThreadPoolExecutor

    journal = long_journal(2_000)
    fold = DisplayFold("r")
    for line in journal:
        fold.fold_line(line)
    expected = fold.export_json()
    broken = journal[:500] + ["{broken"] + journal[500:]

    def one(index: int) -> str:
        if index % 3 == 2:
            with pytest.raises(InputError, match="^line 501: "):
                replay(broken)
            return expected
        return replay(journal)

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(one, range(24)))
    assert results == [expected] * 24

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


# ---------------------------------------------------------------- errors carry kind, line and path


def raised(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test inspects whatever was raised
        return error
    raise AssertionError("nothing was raised")


def test_input_errors_carry_kind_line_and_path() -> None:
    fold = DisplayFold("r")
    cases = [
        ("{not json", "json", None),
        (TEXT_START.replace('"sequence":1', '"sequence":"one"'), "wrong_type", "sequence"),
        (TEXT_START.replace('"run_id":"r",', ""), "missing", "run_id"),
        (TEXT_START.replace('"index":0', '"index":"x"'), "wrong_type", "event.index"),
    ]
    for line, kind, path in cases:
        for call in (fold.fold_line, fold.events, HarnessAguiStreamObserver().observe):
            error = raised(lambda: call(line))
            assert isinstance(error, InputError), line
            assert (error.kind, error.line, error.path) == (kind, None, path), line
            if path is not None:
                assert str(error).startswith(f"{path}: ")
        # In a batch, the same error names its 1-based line, and keeps its kind and path.
        for batch in (replay, HarnessAguiStreamObserver().resume_lines):
            error = raised(lambda: batch([RUN_STARTED, line]))
            assert isinstance(error, InputError)
            assert (error.kind, error.line, error.path) == (kind, 2, path)
            assert str(error).startswith("line 2: ")
    assert str(fold.position) == "0-0"


def test_observation_errors_carry_the_kind_a_host_matches_on() -> None:
    observer = HarnessAguiStreamObserver()
    observer.observe(RUN_STARTED)
    observer.observe(TEXT_START)
    kind_change = TEXT_DELTA.replace('"sequence":2', '"sequence":3').replace(
        '"delta":{"content_delta":"lo","part_delta_kind":"text"}',
        '"delta":{"content_delta":"hmm","signature_delta":null,"provider_name":null,"provider_details":null,'
        '"part_delta_kind":"thinking"}',
    )
    cases = [
        (lambda: observer.observe(kind_change), "part_kind_changed", "Pydantic part kind changed before its end event"),
        (
            lambda: observer.observe(TEXT_DELTA.replace('"thread_id":"t"', '"thread_id":"u"')),
            "thread_changed",
            "Harness Thread correlation changed for a Run",
        ),
        (
            lambda: asyncio.run(observer.resume([RUN_STARTED])),
            "not_fresh",
            "Observer resumption requires a fresh observer",
        ),
        (
            lambda: HarnessAguiStreamObserver(retain_events=False).snapshot(),
            "events_not_retained",
            "Snapshots require retain_events=True",
        ),
    ]
    for call, kind, message in cases:
        error = raised(call)
        assert isinstance(error, AguiObservationError)
        assert (str(error), error.kind, error.line, error.path) == (message, kind, None, None)
    assert observer.event_count == 3
    # In a batch ("A failing item raises with its 1-based `line`"): the line of the rejected item.
    batch = HarnessAguiStreamObserver()
    error = raised(lambda: batch.resume_lines([RUN_STARTED, TEXT_START, kind_change]))
    assert isinstance(error, AguiObservationError)
    assert batch.run_id is None and batch.event_count == 0
    assert (error.kind, error.line) == ("part_kind_changed", 3)


def test_observe_is_refused_while_a_resumption_runs_with_kind_resuming() -> None:
    async def scenario() -> list[BaseException]:
        observer = HarnessAguiStreamObserver()
        reached, release = asyncio.Event(), asyncio.Event()

        async def history() -> AsyncIterator[str]:
            yield RUN_STARTED
            reached.set()
            await release.wait()
            yield TEXT_START

        task = asyncio.create_task(observer.resume(history()))
        await reached.wait()
        errors = [
            raised(lambda: observer.observe(TEXT_DELTA)),
            raised(lambda: observer.observe_json(TEXT_DELTA)),
            raised(observer.export),
            raised(observer.export_json),
        ]
        second = HarnessAguiStreamObserver()
        try:
            await observer.resume([RUN_STARTED])
        except AguiObservationError as error:
            errors.append(error)
        release.set()
        await task
        assert observer.run_id == "r" and observer.event_count == 3
        assert second.run_id is None
        return errors

    errors = asyncio.run(scenario())
    messages = [
        "Cannot observe while observer resumption is in progress",
        "Cannot observe while observer resumption is in progress",
        "Cannot export while observer resumption is in progress",
        "Cannot export while observer resumption is in progress",
        "Observer resumption is already in progress",
    ]
    assert [str(error) for error in errors] == messages
    assert all(isinstance(error, AguiObservationError) and error.kind == "resuming" for error in errors)


# A source line whose inline-delegation payload fails the reference's model (invocation_id breaks its pattern).
BAD_DELEGATION = (
    '{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00",'
    '"event":{"schema_version":"1","kind":"delegation","payload":{"type":"inline_delegation",'
    '"invocation_id":"bad id","action":"started","subagent":"helper","status":"running","child_instance_id":"i",'
    '"parent_run_id":"r","parent_agent_instance_id":"a","parent_tool_call_id":"c","child_run_id":"child"}}}'
)


def test_a_line_failing_the_payload_model_raises_this_packages_validation_error() -> None:
    """A line input (str, bytes or dict) raises `a13n_stream_rs.ValidationError` with Pydantic's message for the
    payload, whether or not a13n-harness is installed; nothing is committed."""
    for form in (lambda line: line, str.encode, json.loads):
        observer = HarnessAguiStreamObserver()
        observer.observe(RUN_STARTED)
        fold = DisplayFold("r")
        fold.fold_line(RUN_STARTED)
        for call in (observer.observe, observer.observe_json, fold.fold_line, fold.events):
            error = raised(lambda: call(form(BAD_DELEGATION)))
            assert type(error) is ValidationError, f"{call.__name__}: {type(error)}: {error}"
            assert str(error).startswith("1 validation error for InlineDelegationPayload\ninvocation_id\n")
            assert "input_value='bad id'" in str(error)
            assert error.kind == "validation"
        assert observer.event_count == 1 and str(fold.position) == "0-1"
    # The batch writes the same message in its error line.
    (line,) = DisplayFold("r").fold_lines([BAD_DELEGATION])
    assert line.startswith('{"error":{"type":"ValidationError","message":"1 validation error for InlineDelegationPayload')


def test_a_processor_returning_the_event_keeps_numbers_as_python_does() -> None:
    """An identity processor changes nothing, whatever the spelling of a payload's numbers (they come back through
    Python as Python holds them: `1.50` as 1.5, `-0` as 0, integers of any size exact)."""
    line = ('{"thread_id":"t","run_id":"r","sequence":%d,"occurred_at":"2026-11-29T12:00:00+00:00",'
            '"event":{"schema_version":"1","kind":"%s","payload":%s}}')
    for payload, expected in [('{"a":1.50}', {"a": 1.5}), ('{"a":1E2}', {"a": 100.0}), ('{"a":-0}', {"a": 0}),
                              ('{"a":18446744073709551616}', {"a": 18446744073709551616})]:
        observer = HarnessAguiStreamObserver(processor=lambda source, event: event)
        observer.observe(line % (0, "lifecycle", '{"type":"run_started"}'))
        (event,) = observer.observe(line % (1, "usage", payload))
        assert event.model_dump(mode="json")["value"]["event"]["payload"] == expected


def test_a_processor_calling_back_into_its_observer_is_told_why() -> None:
    """The state is mid-change while a processor runs: a call back into the observer (or fold) is refused with a
    message that names that cause, not only another thread."""
    box: dict[str, Any] = {}

    def processor(source: Any, event: Any) -> Any:
        box["observer"].export()
        return event

    observer = HarnessAguiStreamObserver(processor=processor)
    box["observer"] = observer
    line = json.dumps({
        "thread_id": "t", "run_id": "r", "sequence": 0, "occurred_at": "2026-11-29T12:00:00+00:00",
        "event": {"schema_version": "1", "kind": "lifecycle", "payload": {"type": "run_started"}},
    })
    with pytest.raises(RuntimeError, match="its own processor called back into it"):
        observer.observe(line)


def test_text_holding_a_lone_surrogate_raises_an_input_error_naming_the_field_and_changes_nothing() -> None:
    """Half of a UTF-16 pair (what `json.loads` makes of a `\\ud83d` escape split from its other half) has no UTF-8
    form: an `InputError` naming the field and the code point, not the codec's `UnicodeEncodeError`."""
    harness = pytest.importorskip("a13n_harness", reason="native items need a13n-harness==0.21.0")
    from pydantic_ai.messages import PartDeltaEvent, TextPartDelta

    half = json.loads('"\\ud83d"')
    native = harness.HarnessEvent(
        thread_id="t",
        run_id="r",
        sequence=2,
        occurred_at=datetime.datetime(2026, 11, 29, 12, 0, 2, tzinfo=datetime.timezone.utc),
        event=PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="rocket " + half)),
    )
    field = r"event\.delta\.content_delta: a lone surrogate \(U\+D83D, half of a UTF-16 pair\) is not Unicode text"
    observer = HarnessAguiStreamObserver()
    fold = DisplayFold("r")
    for line in (RUN_STARTED, TEXT_START):
        observer.observe(line)
        fold.fold(fold.events(line), line)
    before = (observer.export_json(), fold.export_json())
    with pytest.raises(InputError, match=field):
        observer.observe(native)
    with pytest.raises(InputError, match=field):
        fold.events(native)
    with pytest.raises(InputError, match=r"^a lone surrogate \(U\+D83D"):
        fold.fold_line(TEXT_DELTA.replace('"lo"', '"lo' + half + '"'))
    with pytest.raises(InputError, match=r"event\.delta\.content_delta: a lone surrogate"):
        observer.observe(json.loads(TEXT_DELTA.replace('"lo"', '"\\ud83d"')))
    with pytest.raises(InputError, match=r"run_id: a lone surrogate"):
        DisplayFold("r" + half)
    assert (observer.export_json(), fold.export_json()) == before
    # Such a str is no id: the views find nothing, as a dict would (found by a review: UnicodeEncodeError).
    with pytest.raises(KeyError):
        fold.items[half]
    assert half not in fold.items and fold.items.get(half) is None and fold.items.pop(half, None) is None
    fold.changed.discard(half)
    observer.observe(TEXT_DELTA)

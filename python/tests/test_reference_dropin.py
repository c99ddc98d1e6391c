"""The product page's code, run on the native objects of real offline Harness runs, prints exactly the same with
only the import changed.

The page is "Replay and recovery" (`../shared/seed/replay-and-recovery.txt` beside the checkout). Its code blocks
run here verbatim with only `a13n_stream_protocol` replaced, and each of its recipes is also written once as a
function of the package it imports, `a13n_stream_protocol` (the reference, 0.21.0) or `a13n_stream_rs`, with what a
real host adds: a checkpoint taken and restored mid-stream, cursors anywhere in the journal, processors written
against `ag_ui` models, errors. Both packages run each on the SAME native items (`native_runs`, conftest.py: real
offline Harness runs) and what they print is compared as text: every published batch as its models'
`model_dump_json()`, checkpoints, the fold's items, changed ids and position, processor calls, and each error as its
class name and message.

Needs the reference and a13n-harness (Python >= 3.13; CI installs both beside the package); skips otherwise.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import inspect
import io
import json
import os
import subprocess
import sys
from typing import Any, AsyncIterator, Callable, Iterable, Optional

import pytest

pytest.importorskip("a13n_harness", reason="a13n-harness==0.21.0 is not installed (it needs Python >= 3.13)")
pytest.importorskip(
    "a13n_stream_protocol", reason="the reference a13n-stream-protocol==0.21.0 is not installed (needs Python >= 3.13)"
)

from ag_ui.core import (  # noqa: E402
    CustomEvent,
    RunFinishedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallStartEvent,
)

from conftest import NATIVE_RUN_NAMES, REPO, synthetic_errors  # noqa: E402

REFERENCE, OURS = "a13n_stream_protocol", "a13n_stream_rs"
PAGE = REPO.parent / "shared" / "seed" / "replay-and-recovery.txt"
USAGE_EVENTS = frozenset({"a13n.harness.usage", "a13n.harness.diagnostic"})


def assert_same(run: Callable[[str], list[str]]) -> list[str]:
    """Run a recipe with each package; what ours prints must be what the reference prints, line for line."""
    reference = run(REFERENCE)
    ours = run(OURS)
    assert ours == reference
    return ours


def dumped(models: Iterable[Any]) -> str:
    """A published batch: each model's own JSON."""
    return "[" + ",".join(model.model_dump_json() for model in models) + "]"


def observed_and_folded(native: list[Any]) -> Callable[[str], list[str]]:
    """A recipe: each native item observed by an observer and folded by a display fold (its events, then the
    item); the fold's checkpoint last."""

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        observer = module.HarnessAguiStreamObserver()
        fold = importlib.import_module(f"{package}.display").DisplayFold("r")
        printed = []
        for item in native:
            printed.append(dumped(observer.observe(item)))
            printed.append(json.dumps(fold.fold(fold.events(item), item), default=str))
        printed.append(fold.export().model_dump_json())
        return printed

    return run


def called_and_returned(returned: list[tuple[Any, Optional[dict[str, Any]]]], outcomes: tuple[str, ...]) -> list[Any]:
    """Native items of run `r`: for each returned value (with its part's metadata) and each outcome, a call of tool
    `f` and its return."""
    from datetime import UTC, datetime

    from a13n_harness import HarnessEvent
    from pydantic_ai.messages import FunctionToolCallEvent, FunctionToolResultEvent, ToolCallPart, ToolReturnPart

    at = datetime(2026, 1, 1, tzinfo=UTC)
    native: list[Any] = []
    for index, (content, metadata) in enumerate(returned):
        for outcome in outcomes:
            call_id = f"c{index}-{outcome}"
            call = FunctionToolCallEvent(part=ToolCallPart(tool_name="f", args={"a": 1}, tool_call_id=call_id))
            part = ToolReturnPart(
                tool_name="f", tool_call_id=call_id, content=content, outcome=outcome, metadata=metadata
            )
            native.append(HarnessEvent(thread_id="t", run_id="r", sequence=len(native), occurred_at=at, event=call))
            result = FunctionToolResultEvent(part=part)
            native.append(HarnessEvent(thread_id="t", run_id="r", sequence=len(native), occurred_at=at, event=result))
    return native


def failure(error: BaseException) -> str:
    return f"raised {type(error).__name__}: {error}"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def stream(items: Iterable[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


class Host:
    """The page's `host`: what it persists and publishes, as the lines a subscriber would read."""

    def __init__(self) -> None:
        self.printed: list[str] = []

    def print(self, *parts: Any) -> None:
        self.printed.append(" ".join(str(part) for part in parts))

    async def persist_and_publish(self, published: Iterable[Any]) -> None:
        self.print("published", dumped(published))


class SourceJournal:
    """The page's `source_journal`: the exact, ordered source history of one root stream (children included)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    async def read_prefix(self, *, run_id: str, through: int) -> AsyncIterator[Any]:
        assert run_id == self.items[0].run_id
        for item in self.items[:through]:
            yield item

    async def tail(self, *, run_id: str, after: int) -> AsyncIterator[Any]:
        assert run_id == self.items[0].run_id
        for item in self.items[after:]:
            yield item


def cuts(items: list[Any]) -> list[int]:
    n = len(items)
    return sorted({1, n // 3, n // 2, n - 1} - {0})


# ---------------------------------------------------------------- processors, written against ag_ui models

Processor = Callable[[Any, Any], Any]


def make_processor(name: Optional[str], calls: list[str]) -> Optional[Processor]:
    """A host's processor as a reference host writes it (`ag_ui` models in and out), recording every call: the
    source item it is given (the native object) and the event's type."""

    def redact(event: Any) -> Any:
        if isinstance(event, TextMessageContentEvent):
            return event.model_copy(update={"delta": "*" * len(event.delta)})
        return event

    def redact_in_place(event: Any) -> Any:
        if isinstance(event, TextMessageContentEvent):
            event.delta = "*" * len(event.delta)
        return event

    def drop_usage(event: Any) -> Any:
        if isinstance(event, CustomEvent) and event.name in USAGE_EVENTS:
            return None
        return event

    def process_event(event: Any) -> Any:
        # The page's `process_event`: redact text, drop usage reports, keep the rest.
        return drop_usage(redact(event))

    changes: dict[str, Callable[[Any], Any]] = {
        "redact": redact,
        "redact_in_place": redact_in_place,
        "drop_usage": drop_usage,
        "process_event": process_event,
    }
    if name is None:
        return None
    change = changes[name]

    def processor(source: Any, event: Any) -> Any:
        calls.append(f"call {type(source).__name__} {source.run_id} {source.sequence} {event.type.value}")
        return change(event)

    return processor


# ---------------------------------------------------------------- the names a host imports


def test_the_references_public_names_are_here() -> None:
    """Every name the reference exports at the top level, and every name the page imports, has its counterpart."""
    reference = importlib.import_module(REFERENCE)
    ours = importlib.import_module(OURS)
    for name in reference.__all__:
        assert hasattr(ours, name), name
    assert ours.AUTHORED_INPUT_EVENT_NAMES == reference.AUTHORED_INPUT_EVENT_NAMES
    assert ours.ContentMetadata is reference.ContentMetadata
    assert issubclass(ours.AguiObservationError, ValueError)
    ours_display = importlib.import_module(f"{OURS}.display")
    reference_display = importlib.import_module(f"{REFERENCE}.display")
    for name in ("DisplayFold", "DisplaySnapshot", "DisplayContinuation", "StreamPosition", "Item", "ItemRef",
                 "Observed", "ContentRef", "ObserverContinuation", "item_id", "MAX_FIELD_CHARS",
                 "MAX_OBSERVATION_BYTES"):
        assert hasattr(ours_display, name), name
    assert ours_display.item_id("r", "tool_call", "c") == reference_display.item_id("r", "tool_call", "c")
    assert (ours_display.MAX_FIELD_CHARS, ours_display.MAX_OBSERVATION_BYTES) == (
        reference_display.MAX_FIELD_CHARS,
        reference_display.MAX_OBSERVATION_BYTES,
    )
    assert ours.DisplayFold is ours_display.DisplayFold


# ---------------------------------------------------------------- (a) the page's code blocks, verbatim

CHECKPOINT_EXAMPLE = """\
from a13n_stream_protocol.display import DisplayFold, DisplaySnapshot

prefix = [
    {"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001},
]
suffix = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002},
    {"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003},
]
fold = DisplayFold("run-example")
fold.fold(prefix)
checkpoint_json = fold.export().model_dump_json()

restored = DisplayFold.restore(DisplaySnapshot.model_validate_json(checkpoint_json))
restored.fold(suffix)

uninterrupted = DisplayFold("run-example")
uninterrupted.fold(prefix + suffix)
assert restored.export() == uninterrupted.export()
item = next(iter(restored.items.values()))
assert item.content["text"] == "Hello world"
assert item.state == "completed"
"""

LIVE_LOOP = """\
fold = DisplayFold(run_id)
async for source in run_stream:
    observed = fold.fold(fold.events(source), source)
    await host.persist_and_publish(observed)
"""

RESUME = """\
from a13n_stream_protocol import HarnessAguiStreamObserver

observer = HarnessAguiStreamObserver(retain_events=False)
await observer.resume(source_journal.read_prefix(run_id=run_id, through=cursor))

async for item in source_journal.tail(run_id=run_id, after=cursor):
    await host.persist_and_publish(observer.observe(item))
"""


def run_page_code(code: str, package: str, **names: Any) -> list[str]:
    """The page's code with only the import changed, run as a script (top-level `await` included): what it prints,
    with the exception it raised, if any."""
    source = code.replace("a13n_stream_protocol", package)
    assert source.count(package) == code.count("a13n_stream_protocol")
    namespace: dict[str, Any] = {"__name__": "__page__", **names}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            result = eval(compile(source, f"<the page, importing {package}>", "exec", flags=flags), namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
        except Exception as error:  # noqa: BLE001 - what the page's code raised is part of what it shows
            print(failure(error))
    return out.getvalue().splitlines()


class PrintingHost:
    """A host whose `persist_and_publish` prints each batch."""

    async def persist_and_publish(self, published: Iterable[Any]) -> None:
        print("published", dumped(published))


def test_the_page_shows_these_code_blocks_verbatim() -> None:
    if not PAGE.is_file():
        pytest.skip(f"the product page is not beside the checkout ({PAGE})")
    page = PAGE.read_text()
    for block in (CHECKPOINT_EXAMPLE, LIVE_LOOP, RESUME):
        assert block.strip() in page


def test_the_checkpoint_restore_example_prints_the_same() -> None:
    shown = CHECKPOINT_EXAMPLE + (
        "print(checkpoint_json)\n"
        "print(restored.export().model_dump_json())\n"
        "print(uninterrupted.export().model_dump_json())\n"
        "print(item.model_dump_json())\n"
        "print(str(restored.position), sorted(restored.changed), list(restored.items), len(restored.items))\n"
        "print([entry.model_dump_json() for entry in DisplayFold('run-example').fold(prefix + suffix)])\n"
    )
    printed = assert_same(lambda package: run_page_code(shown, package))
    assert len(printed) == 6 and not printed[0].startswith("raised")
    assert '"text":"Hello world"' in printed[3]


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_the_page_live_loop_prints_the_same(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    shown = (
        "from a13n_stream_protocol.display import DisplayFold, DisplaySnapshot\n"
        + LIVE_LOOP
        + "print(fold.export().model_dump_json())\n"
        "print(str(fold.position), sorted(fold.changed))\n"
        "for key, value in fold.items.items():\n"
        "    print(key, value.model_dump_json())\n"
    )

    def run(package: str) -> list[str]:
        return run_page_code(
            shown, package, run_id=items[0].run_id, run_stream=stream(items), host=PrintingHost()
        )

    printed = assert_same(run)
    assert len(printed) > 1


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_the_page_resume_example_prints_the_same(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    shown = RESUME + "print(observer.export().model_dump_json(), observer.event_count)\n"
    for cursor in sorted({0, *cuts(items), len(items)}):

        def run(package: str) -> list[str]:
            return run_page_code(
                shown,
                package,
                run_id=items[0].run_id,
                cursor=cursor,
                source_journal=SourceJournal(items),
                host=PrintingHost(),
            )

        assert_same(run)


# ---------------------------------------------------------------- (b) the live loop, with a checkpoint mid-stream


async def live_loop(package: str, items: list[Any], *, cut: int, processor: Optional[str]) -> list[str]:
    display = importlib.import_module(f"{package}.display")
    DisplayFold, DisplaySnapshot = display.DisplayFold, display.DisplaySnapshot
    host = Host()
    calls: list[str] = []
    process_event = make_processor(processor, calls)
    run_id = items[0].run_id
    published = 0

    async def follow(fold: Any, run_stream: AsyncIterator[Any]) -> None:
        nonlocal published
        async for source in run_stream:
            try:
                events = fold.events(source)
                host.print("events", dumps(events))
                observed = fold.fold(events, source)
            except Exception as error:  # noqa: BLE001 - a rejected item is reported, and the loop goes on
                host.print(failure(error), str(fold.position))
                continue
            await host.persist_and_publish(observed)
            changed = sorted(fold.changed)
            host.print("position", str(fold.position), "changed", changed, len(fold.changed))
            host.print("changed items", dumped(fold.items[key] for key in changed))
            published += 1
            if published % 3 == 0:  # the host publishes the changed items every few batches, then clears them
                fold.changed.clear()

    fold = DisplayFold(run_id, processor=process_event)
    await follow(fold, stream(items[:cut]))
    checkpoint_json = fold.export().model_dump_json()
    host.print("checkpoint", checkpoint_json)
    host.print("continuation", fold.export_continuation().model_dump_json())
    host.print("delta", fold.capture_delta().model_dump_json())
    host.print("delta again", fold.capture_delta().model_dump_json())

    # After restore, feed the next source item through the same loop (with the same processor).
    fold = DisplayFold.restore(DisplaySnapshot.model_validate_json(checkpoint_json), processor=process_event)
    host.print("restored", str(fold.position), sorted(fold.changed), list(fold.items), len(fold.items))
    await follow(fold, stream(items[cut:]))
    host.print("final", fold.export().model_dump_json())
    for key, value in fold.items.items():
        host.print("item", key, value.model_dump_json(), key in fold.items)
    host.print("position", str(fold.position), repr(fold.position), "changed", sorted(fold.changed))
    host.print("absent", "itm_absent" in fold.items, "itm_absent" in fold.changed, fold.items.get("itm_absent"))
    return host.printed + calls


@pytest.mark.parametrize("processor", [None, "redact", "drop_usage"])
@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_the_live_loop_with_a_checkpoint_prints_the_same(
    run_name: str, processor: Optional[str], native_runs: dict[str, list[Any]]
) -> None:
    items = native_runs[run_name]
    for cut in cuts(items):
        printed = assert_same(lambda package: asyncio.run(live_loop(package, items, cut=cut, processor=processor)))
        assert any(line.startswith("published [{") for line in printed), "nothing was published"


def paging_loop(package: str, items: list[Any], *, newest: bool) -> list[str]:
    """A host paging items out as it folds: every third item it deletes the oldest item (or the newest, which an
    event may still change: the reference makes it anew), and drops it from its own changed set too."""
    display = importlib.import_module(f"{package}.display")
    fold = display.DisplayFold(items[0].run_id)
    printed: list[str] = []
    for index, source in enumerate(items):
        try:
            observed = fold.fold(fold.events(source), source)
        except Exception as error:  # noqa: BLE001 - a rejected item is reported, and the loop goes on
            printed.append(failure(error))
            continue
        printed.append(dumped(observed))
        if index % 3 == 1 and len(fold.items) > 1:
            key = list(fold.items)[-1 if newest else 0]
            retired = fold.items[key]
            del fold.items[key]
            fold.changed.discard(key)
            printed.append(f"retired {retired.model_dump_json()} {key in fold.items} {len(fold.items)} {fold.next}")
            if index % 6 == 1:
                printed.append(f"popped {fold.items.pop(list(fold.items)[0]).id} {fold.items.pop('itm_absent', None)}")
                fold.changed.intersection_update(fold.items)
        printed.append(f"changed {sorted(fold.changed)}")
    printed.append(fold.export().model_dump_json())
    for key, item in fold.items.items():
        printed.append(f"{key} {item.ordinal}")
    return printed


@pytest.mark.parametrize("newest", [False, True], ids=["oldest", "newest"])
@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_paging_items_out_prints_the_same(run_name: str, newest: bool, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    printed = assert_same(lambda package: paging_loop(package, items, newest=newest))
    assert any(line.startswith("retired ") for line in printed), "nothing was retired"


def test_items_are_retired_not_assigned(native_runs: dict[str, list[Any]]) -> None:
    display = importlib.import_module(f"{OURS}.display")
    items = native_runs["real-run-0"]
    fold = display.DisplayFold(items[0].run_id)
    for source in items:
        fold.fold(fold.events(source), source)
    key = next(iter(fold.items))
    with pytest.raises(TypeError, match="retired"):
        fold.items[key] = fold.items[key]
    with pytest.raises(KeyError):
        del fold.items["itm_absent"]
    fold.items.clear()
    assert len(fold.items) == 0 and fold.export().items == [] and fold.next > 1


# ---------------------------------------------------------------- (c) resume from the source journal


async def resume_from_journal(
    package: str, items: list[Any], *, cursor: int, retain_events: bool, observer_class: str
) -> list[str]:
    observers = importlib.import_module(package)
    HarnessAguiStreamObserver = getattr(observers, observer_class)
    host = Host()
    source_journal = SourceJournal(items)
    run_id = items[0].run_id

    observer = HarnessAguiStreamObserver(retain_events=retain_events)
    try:
        resumed = await observer.resume(source_journal.read_prefix(run_id=run_id, through=cursor))
        host.print("resumed", resumed, observer.event_count, observer.thread_id, observer.run_id)
    except Exception as error:  # noqa: BLE001 - a failed resumption is reported: the observer stays fresh
        host.print(failure(error), observer.event_count, observer.thread_id, observer.run_id)
    host.print("export", observer.export().model_dump_json())

    async for item in source_journal.tail(run_id=run_id, after=cursor):
        try:
            await host.persist_and_publish(observer.observe(item))
        except Exception as error:  # noqa: BLE001 - a rejected item is reported, and the tail goes on
            host.print(failure(error))
    host.print("export", observer.export().model_dump_json(), observer.event_count)
    try:
        host.print("snapshot", dumped(observer.snapshot()))
        count = observer.event_count
        host.print("slice", dumped(observer.snapshot(start=count // 3, stop=count // 2)))
        host.print("empty", dumped(observer.snapshot(start=count, stop=count)))
    except Exception as error:  # noqa: BLE001 - without retained events snapshot() is refused
        host.print(failure(error))
    return host.printed


@pytest.mark.parametrize("observer_class", ["HarnessAguiStreamObserver", "HarnessAguiObserver"])
@pytest.mark.parametrize("retain_events", [False, True], ids=["live", "retained"])
@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_resume_from_a_source_journal_prints_the_same(
    run_name: str, retain_events: bool, observer_class: str, native_runs: dict[str, list[Any]]
) -> None:
    items = native_runs[run_name]
    for cursor in sorted({0, *cuts(items), len(items)}):
        assert_same(
            lambda package: asyncio.run(
                resume_from_journal(
                    package, items, cursor=cursor, retain_events=retain_events, observer_class=observer_class
                )
            )
        )


# ---------------------------------------------------------------- (d) export, then restore with the processor


def restore_with_processor(
    package: str, items: list[Any], *, cut: int, observer_class: str, via_json: bool, processor: str
) -> list[str]:
    observers = importlib.import_module(package)
    display = importlib.import_module(f"{package}.display")
    HarnessAguiStreamObserver = getattr(observers, observer_class)
    host = Host()
    calls: list[str] = []
    process_event = make_processor(processor, calls)

    def observe(observer: Any, item: Any) -> None:
        try:
            host.print("published", dumped(observer.observe(item)))
        except Exception as error:  # noqa: BLE001 - a rejected item is reported, and observation goes on
            host.print(failure(error))

    observer = HarnessAguiStreamObserver(processor=process_event)
    for item in items[:cut]:
        observe(observer, item)
    saved = observer.export()
    host.print("saved", saved.model_dump_json())
    if via_json:
        saved = display.ObserverContinuation.model_validate_json(saved.model_dump_json())
    # Supply the processor again; the restored observer keeps no event journal.
    restored = HarnessAguiStreamObserver.restore(saved, processor=process_event)
    host.print("restored", restored.event_count, restored.thread_id, restored.run_id)
    for item in items[cut:]:
        observe(restored, item)
    host.print("export", restored.export().model_dump_json(), restored.event_count)
    try:
        restored.snapshot()
    except Exception as error:  # noqa: BLE001 - the refusal is what the page promises
        host.print(failure(error))
    return host.printed + calls


@pytest.mark.parametrize("via_json", [False, True], ids=["model", "json"])
@pytest.mark.parametrize("observer_class", ["HarnessAguiStreamObserver", "HarnessAguiObserver"])
@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_restore_with_a_processor_of_models_prints_the_same(
    run_name: str, observer_class: str, via_json: bool, native_runs: dict[str, list[Any]]
) -> None:
    items = native_runs[run_name]
    for cut in cuts(items):
        printed = assert_same(
            lambda package: restore_with_processor(
                package, items, cut=cut, observer_class=observer_class, via_json=via_json, processor="process_event"
            )
        )
        assert any(line.startswith("call HarnessEvent ") for line in printed)


# ---------------------------------------------------------------- redaction and cancelled or failed resumption


@pytest.mark.parametrize("processor", ["redact", "redact_in_place"])
def test_a_redaction_processor_written_for_the_reference_redacts(
    processor: str, native_runs: dict[str, list[Any]]
) -> None:
    redacted = 0
    for run_name in NATIVE_RUN_NAMES:
        items = native_runs[run_name]
        # The observer: every TEXT_MESSAGE_CONTENT it emits is stars, as the reference's.
        outputs: dict[str, list[Any]] = {}
        for package in (REFERENCE, OURS):
            calls: list[str] = []
            observer = importlib.import_module(package).HarnessAguiStreamObserver(
                processor=make_processor(processor, calls)
            )
            events: list[Any] = []
            for item in items:
                with contextlib.suppress(ValueError):  # the error streams' rejected items
                    events.extend(observer.observe(item))
            outputs[package] = [event.model_dump_json() for event in events] + calls
            if package == OURS:
                deltas = [event.delta for event in events if isinstance(event, TextMessageContentEvent)]
                assert all(delta and delta == "*" * len(delta) for delta in deltas), run_name
                redacted += len(deltas)
        assert outputs[OURS] == outputs[REFERENCE], run_name
        # The display fold: the assistant's message texts are stars, as the reference's.
        printed = assert_same(lambda package: asyncio.run(live_loop(package, items, cut=1, processor=processor)))
        assert printed
        fold = importlib.import_module(f"{OURS}.display").DisplayFold(
            items[0].run_id, processor=make_processor(processor, [])
        )
        for item in items:
            with contextlib.suppress(ValueError):
                fold.fold(fold.events(item), item)
        for value in fold.items.values():
            if value.kind == "text_message" and value.content.get("role") == "assistant":
                text = value.content.get("text", "")
                assert isinstance(text, str) and text == "*" * len(text), run_name
    assert redacted > 100


async def cancelled_resume(package: str, items: list[Any], cut: int) -> tuple[list[str], list[Optional[str]]]:
    """Cancel a resumption while its history waits; then the observer is fresh, and a retry succeeds."""
    observers = importlib.import_module(package)
    observer = observers.HarnessAguiStreamObserver()
    fresh = observers.HarnessAguiStreamObserver().export().model_dump_json()
    printed: list[str] = []
    kinds: list[Optional[str]] = []
    reached, release = asyncio.Event(), asyncio.Event()

    async def slow_history() -> AsyncIterator[Any]:
        for index, item in enumerate(items):
            if index == cut:
                reached.set()
                await release.wait()  # never set: the resumption is cancelled while it waits here
            yield item

    task = asyncio.create_task(observer.resume(slow_history()))
    await reached.wait()
    # While it runs, observation, export and another resumption are refused.
    refused: list[Callable[[], Any]] = [lambda: observer.observe(items[cut]), observer.export]
    for call in refused:
        try:
            printed.append(f"not refused {call()!r}")
        except Exception as error:  # noqa: BLE001
            printed.append(failure(error))
            kinds.append(getattr(error, "kind", None))
    try:
        await observer.resume(stream(items))
        printed.append("second resumption not refused")
    except Exception as error:  # noqa: BLE001
        printed.append(failure(error))
        kinds.append(getattr(error, "kind", None))
    printed.append(f"while resuming: {observer.event_count} {observer.thread_id} {observer.run_id}")

    task.cancel()
    try:
        await task
        printed.append("not cancelled")
    except asyncio.CancelledError:
        printed.append(f"cancelled {task.cancelled()}")
    assert not release.is_set()
    export = observer.export().model_dump_json()
    printed.append(f"fresh after cancellation: {export == fresh} {export}")
    printed.append(f"{observer.event_count} {observer.thread_id} {observer.run_id} {dumped(observer.snapshot())}")

    # Retry with the complete history, then observe the tail.
    await observer.resume(stream(items[:-1]))
    printed.append(f"retried {observer.export().model_dump_json()} {observer.event_count}")
    printed.append(f"snapshot {dumped(observer.snapshot())}")
    printed.append(f"tail {dumped(observer.observe(items[-1]))}")
    return printed, kinds


@pytest.mark.parametrize("run_name", ["real-run-0", "real-run-1"])
def test_a_cancelled_resume_leaves_the_observer_fresh(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    for cut in (0, 1, len(items) // 2, len(items) - 1):
        reference, _ = asyncio.run(cancelled_resume(REFERENCE, items, cut))
        ours, kinds = asyncio.run(cancelled_resume(OURS, items, cut))
        assert ours == reference, f"cut {cut}"
        assert ours[:3] == [
            "raised AguiObservationError: Cannot observe while observer resumption is in progress",
            "raised AguiObservationError: Cannot export while observer resumption is in progress",
            "raised AguiObservationError: Observer resumption is already in progress",
        ]
        assert kinds == ["resuming", "resuming", "resuming"]
        assert ours[4] == "cancelled True" and ours[5].startswith("fresh after cancellation: True ")


class JournalReadFailed(Exception):
    pass


async def failed_resume(package: str, items: list[Any], history: Callable[[], AsyncIterator[Any]]) -> list[str]:
    """A resumption whose history fails; the observer stays fresh, and a retry with complete history succeeds."""
    observers = importlib.import_module(package)
    observer = observers.HarnessAguiStreamObserver()
    fresh = observers.HarnessAguiStreamObserver().export().model_dump_json()
    printed: list[str] = []
    try:
        await observer.resume(history())
        printed.append("resumed")
    except Exception as error:  # noqa: BLE001
        printed.append(failure(error))
    export = observer.export().model_dump_json()
    printed.append(f"fresh: {export == fresh} {observer.event_count} {observer.thread_id} {observer.run_id}")
    await observer.resume(stream(items))
    printed.append(f"retried {observer.export().model_dump_json()} {dumped(observer.snapshot())}")
    return printed


def test_a_failing_resume_leaves_the_observer_fresh(native_runs: dict[str, list[Any]]) -> None:
    items = native_runs["real-run-0"]

    async def journal_fails() -> AsyncIterator[Any]:
        for index, item in enumerate(items):
            if index == len(items) // 2:
                raise JournalReadFailed("the journal could not be read")
            yield item

    rejected = synthetic_errors()

    async def holds_a_rejected_item() -> AsyncIterator[Any]:
        for item in rejected:  # its third item changes a part's kind: the observer rejects it
            yield item

    for history, expected in (
        (journal_fails, "raised JournalReadFailed: the journal could not be read"),
        (holds_a_rejected_item, "raised AguiObservationError: Pydantic part kind changed before its end event"),
    ):
        printed = assert_same(lambda package: asyncio.run(failed_resume(package, items, history)))
        assert printed[0] == expected
        assert printed[1] == "fresh: True 0 None None"


# ---------------------------------------------------------------- (e) errors: the same class and message


def each_outcome(items: list[Any], step: Callable[[Any], Any]) -> list[str]:
    printed = []
    for item in items:
        try:
            printed.append(dumped(step(item)))
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            printed.append(failure(error))
    return printed


def observe_all(package: str, items: list[Any], **options: Any) -> list[str]:
    """Every item through each observer and through a display fold: each batch, or the error raised."""
    observers = importlib.import_module(package)
    display = importlib.import_module(f"{package}.display")
    printed = []
    for name in ("HarnessAguiStreamObserver", "HarnessAguiObserver"):
        printed += each_outcome(items, getattr(observers, name)(**options).observe)
    fold = display.DisplayFold(items[0].run_id, **options)
    printed += each_outcome(items, lambda item: fold.fold(fold.events(item), item))
    return printed + [fold.export().model_dump_json()]


def test_rejected_items_raise_the_same_errors(native_runs: dict[str, list[Any]]) -> None:
    """Another thread, another run, a part kind change, a tool-call identity change, an inline delegation whose
    payload fails its model (Pydantic's own ValidationError): each raises what the reference raises."""
    items = native_runs["local-errors"]
    printed = assert_same(lambda package: observe_all(package, items))
    assert "raised AguiObservationError: Pydantic part kind changed before its end event" in printed
    assert "raised AguiObservationError: Pydantic tool-call identity changed before its end event" in printed
    assert "raised AguiObservationError: Harness Thread correlation changed for a Run" in printed
    assert "raised AguiObservationError: Harness Thread correlation changed within one observer" in printed
    assert "raised AguiObservationError: Harness Run correlation changed within one observer" in printed
    assert any(line.startswith("raised ValidationError: 7 validation errors for InlineDelegationPayload") for line in
               printed)


def fields_set_of_events(package: str, items: list[Any], processor: Optional[str]) -> list[str]:
    """Each event's set fields and its `exclude_unset` dump: what a host serializing sparse events sees."""
    observers = importlib.import_module(package)
    printed = []
    for name in ("HarnessAguiStreamObserver", "HarnessAguiObserver"):
        observer = getattr(observers, name)(processor=make_processor(processor, []))
        for item in items:
            try:
                events = observer.observe(item)
            except Exception as error:  # noqa: BLE001 - the error is what is compared
                printed.append(failure(error))
                continue
            for event in events:
                printed.append(f"{sorted(event.model_fields_set)} {event.model_dump_json(exclude_unset=True)}")
    return printed


@pytest.mark.parametrize("processor", [None, "redact"])
@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_events_have_the_same_fields_set(
    run_name: str, processor: Optional[str], native_runs: dict[str, list[Any]]
) -> None:
    printed = assert_same(lambda package: fields_set_of_events(package, native_runs[run_name], processor))
    assert any("'type'" in line for line in printed)


def fields_set_a_processor_sees(package: str, items: list[Any]) -> list[str]:
    """The set fields of each event as a processor is handed it (its own; not those of the models it holds)."""
    observers = importlib.import_module(package)
    printed: list[str] = []

    def processor(source: Any, event: Any) -> Any:
        printed.append(f"{sorted(event.model_fields_set)} {event.type}")
        return event

    observer = observers.HarnessAguiStreamObserver(processor=processor)
    for item in items:
        try:
            observer.observe(item)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            printed.append(failure(error))
    return printed


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_a_processor_is_handed_events_with_the_references_fields_set(
    run_name: str, native_runs: dict[str, list[Any]]
) -> None:
    """The reference hands a processor the events its converter constructed, which count `type` as set only for
    the input events it validates from a dict, and a subagent's start both of its parents; this package's counted
    `type` set for every event, so a processor forwarding `exclude_unset` dumps wrote `"type"` where the
    reference's does not (found by a new user's trial). The models an event holds (a run's outcome, a tool result's
    content parts) are validated here, and count as set what their JSON holds (python/README.md says so)."""
    printed = assert_same(lambda package: fields_set_a_processor_sees(package, native_runs[run_name]))
    assert any("'type'" not in line.split("]")[0] for line in printed)


def fold_then_edit_events(package: str, items: list[Any]) -> list[str]:
    """A host that reuses or edits its event dicts after folding them: the entries keep what was folded."""
    display = importlib.import_module(f"{package}.display")
    fold = display.DisplayFold(items[0].run_id)
    printed, entries = [], []
    for item in items:
        events = fold.events(item)
        try:
            entries += fold.fold(events, item)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            printed.append(failure(error))
        for event in events:
            event["type"] = "EDITED"
            event.pop("timestamp", None)
    return printed + [dumped(entries)]


def test_entries_do_not_follow_later_edits_of_the_folded_dicts(native_runs: dict[str, list[Any]]) -> None:
    printed = assert_same(lambda package: fold_then_edit_events(package, native_runs["real-run-0"]))
    assert "EDITED" not in printed[-1]


def fragments_of(package: str) -> list[str]:
    fragment_custom_event = importlib.import_module(package).fragment_custom_event
    events = [
        CustomEvent(name="small", value={"n": 1}, timestamp=1),
        TextMessageStartEvent(message_id="m", timestamp=2),
        CustomEvent(name="big", value={"text": "é" * 40_000}, timestamp=3, subagent_run_id="child"),
    ]
    printed = []
    for event in events:
        frames = fragment_custom_event(event, identity="i")
        printed.append(f"{len(frames)} {frames[0] is event} {dumped(frames)}")
    return printed


def test_fragmenting_returns_a_small_event_itself_of_any_type() -> None:
    printed = assert_same(fragments_of)
    assert printed[0].startswith("1 True") and printed[1].startswith("1 True")


def subclassed(package: str, items: list[Any]) -> list[str]:
    """A host that subclasses the fold and the observer, keeping its own attributes on them."""
    observers = importlib.import_module(package)
    display = importlib.import_module(f"{package}.display")

    class CountingFold(display.DisplayFold):  # type: ignore[misc, name-defined]
        def __init__(self, run_id: str, **options: Any) -> None:
            super().__init__(run_id, **options)
            self.folded = 0

        def fold(self, events: Any, source: Any = None) -> Any:
            self.folded += 1
            return super().fold(events, source)

    class CountingObserver(observers.HarnessAguiStreamObserver):  # type: ignore[misc, name-defined]
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.seen = 0

        def observe(self, item: Any) -> Any:
            self.seen += 1
            return super().observe(item)

    fold, observer = CountingFold(items[0].run_id), CountingObserver(retain_events=False)
    half = len(items) // 2
    printed = each_outcome(items, lambda item: fold.fold(fold.events(item), item))
    printed += each_outcome(items[:half], observer.observe)
    # The observer's `restore` makes the subclass, through its own constructor (the fold's makes a DisplayFold).
    restored = CountingObserver.restore(observer.export())
    printed.append(f"{type(restored).__name__} {restored.seen} {type(display.DisplayFold.restore(fold.export())).__name__}")
    printed += each_outcome(items[half:], restored.observe)
    printed.append(f"{fold.folded} {observer.seen} {restored.seen} {isinstance(fold, display.DisplayFold)}")
    return printed + [fold.export().model_dump_json(), restored.export().model_dump_json()]


def test_a_host_may_subclass_the_fold_and_the_observer(native_runs: dict[str, list[Any]]) -> None:
    printed = assert_same(lambda package: subclassed(package, native_runs["real-run-0"]))
    assert printed[-3].endswith(" True")
    assert "CountingObserver 0 DisplayFold" in printed


def subclass_constructors(package: str, items: list[Any]) -> list[str]:
    """Subclasses whose constructors take their own parameters and pass others to `super().__init__`."""
    observers = importlib.import_module(package)
    display = importlib.import_module(f"{package}.display")
    calls: list[str] = []

    class HostFold(display.DisplayFold):  # type: ignore[misc, name-defined]
        def __init__(self, host: str, run_id: str, *, whole: bool) -> None:
            super().__init__(run_id, full_content=whole)
            self.host = host

    class QuietObserver(observers.HarnessAguiStreamObserver):  # type: ignore[misc, name-defined]
        def __init__(self, name: str) -> None:
            super().__init__(processor=lambda source, event: (calls.append(name), event)[1], retain_events=False)

    class SmallAssembler(observers.CustomEventAssembler):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__(max_pending=1)

    fold = HostFold("host-a", items[0].run_id, whole=True)
    observer = QuietObserver("quiet")
    printed = each_outcome(items, lambda item: fold.fold(fold.events(item), item))
    printed += each_outcome(items, observer.observe)
    printed.append(f"{fold.host} {fold.full_content} {len(calls)} {SmallAssembler().export().model_dump_json()}")
    return printed + [fold.export().model_dump_json()]


def test_a_subclass_constructor_may_take_its_own_arguments(native_runs: dict[str, list[Any]]) -> None:
    printed = assert_same(lambda package: subclass_constructors(package, native_runs["real-run-0"]))
    assert printed[-2].startswith("host-a True ")


NAIVE_TIMES = """
import datetime, importlib, sys
from a13n_harness import HarnessEvent, HarnessExtensionEvent
package = importlib.import_module(sys.argv[1])
observer = package.HarnessAguiStreamObserver()
times = [datetime.datetime(2026, 1, 1), datetime.datetime(2026, 7, 1, 12, 30, 5, 250),
         datetime.datetime(2026, 11, 1, 1, 30), datetime.datetime(2026, 11, 1, 1, 30, fold=1),
         datetime.datetime(2026, 3, 8, 2, 30), datetime.datetime(2026, 3, 8, 2, 30, fold=1)]
for sequence, at in enumerate(times):
    payload = {"type": "run_started"} if sequence == 0 else {"n": sequence}
    kind = "lifecycle" if sequence == 0 else "diagnostic"
    item = HarnessEvent(thread_id="t", run_id="r", sequence=sequence, occurred_at=at,
                        event=HarnessExtensionEvent(kind=kind, payload=payload))
    for event in observer.observe(item):
        print(event.model_dump_json())
"""


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "UTC"])
def test_a_naive_occurred_at_is_read_in_the_hosts_zone(zone: str) -> None:
    """A host that builds events with naive datetimes: the reference reads them as local time (`timestamp()`),
    so their events' timestamps follow the host's zone, daylight saving and `fold` included."""
    def run(package: str) -> list[str]:
        env = {**os.environ, "TZ": zone}
        done = subprocess.run([sys.executable, "-c", NAIVE_TIMES, package], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    printed = assert_same(run)
    assert len(printed) >= 4


UNKNOWN_EVENTS = r"""
import datetime, sys, warnings
from dataclasses import dataclass, field
from typing import Any
from pydantic import TypeAdapter
import pydantic_ai.messages as m
from a13n_harness import HarnessEvent
package = __import__(sys.argv[1])

@dataclass(kw_only=True)
class PluginImages(m.CapabilityEvent, namespace="plugin", name="images"):
    images: list[dict[str, Any]] = field(default_factory=list)

warnings.simplefilter("ignore")
loaded = TypeAdapter(m.AgentStreamEvent).validate_python
events = [
    PluginImages(tool_call_id="c", images=[{"url": "u"}]),
    loaded({"kind": "x.u", "event_kind": "capability", "a": 1, "data": None}),
    loaded({"kind": "x.u", "event_kind": "capability"}),
    loaded({"name": "x.n", "event_kind": "custom", "a": 1}),
]
at = datetime.datetime(2026, 11, 29, 12, tzinfo=datetime.UTC)
observer = package.HarnessAguiStreamObserver()
for sequence, event in enumerate(events):
    item = HarnessEvent(thread_id="t", run_id="r", sequence=sequence, occurred_at=at, event=event)
    for out in observer.observe(item):
        print(out.model_dump_json(by_alias=True, exclude_none=True))
"""


def test_capability_and_custom_events_no_class_is_registered_for_are_carried_as_the_reference() -> None:
    """A capability or custom event of a kind no class of this process has (Pydantic AI reads it into its unknown
    envelope) is carried as the reference carries it: an unknown capability event with what it gathered put back
    at the top (it was nested in `data`), an unknown custom event with it in `data`; and one of a plugin's own
    class as that class dumps it."""
    def run(package: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", UNKNOWN_EVENTS, package], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    printed = assert_same(run)
    assert len(printed) == 4 and '"event":{"a":1,"data":null,"kind":"x.u"' in printed[1], printed


def test_an_invalid_native_payload_raises_pydantics_own_validation_error() -> None:
    """The stream observer (and so the display fold) validates an inline delegation's payload; for a native item
    the error is Pydantic's own `ValidationError`, as the reference raises it."""
    import pydantic

    import a13n_stream_rs
    from a13n_stream_rs.display import DisplayFold

    items = synthetic_errors()
    item = items[9]
    observer = a13n_stream_rs.HarnessAguiStreamObserver()
    fold = DisplayFold("run-s")
    for call in (observer.observe, fold.events):
        call(items[0])
        with pytest.raises(pydantic.ValidationError, match="^7 validation errors for InlineDelegationPayload"):
            call(item)
    assert observer.event_count == 1 and str(fold.position) == "0-0"


def processor_changing(change: Callable[[Any], Any]) -> Processor:
    return lambda source, event: change(event)


def when(kind: type, change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda event: change(event) if isinstance(event, kind) else event


def divide_by_zero(event: Any) -> Any:
    return 1 // 0


PROCESSOR_ERRORS: dict[str, Callable[[Any], Any]] = {
    "structural-field": when(TextMessageStartEvent, lambda event: event.model_copy(update={"message_id": "x"})),
    "timestamp": when(ToolCallArgsEvent, lambda event: event.model_copy(update={"timestamp": 1})),
    "custom-value": when(CustomEvent, lambda event: event.model_copy(update={"value": {"replaced": True}})),
    "non-event": when(TextMessageStartEvent, lambda event: 5),
    "a-dict": when(TextMessageStartEvent, lambda event: event.model_dump(mode="json", by_alias=True)),
    "other-type": when(ToolCallStartEvent, lambda event: CustomEvent(name="x", value=None, timestamp=event.timestamp)),
    "invalid-event": when(TextMessageContentEvent, lambda event: event.model_copy(update={"delta": 7})),
    "undeclared-field": when(TextMessageContentEvent, lambda event: event.model_copy(update={"extra_field": 5})),
    "raises": when(TextMessageContentEvent, divide_by_zero),
    # Mutable fields may change: these are accepted.
    "run-result": when(RunFinishedEvent, lambda event: event.model_copy(update={"result": "withheld"})),
    "tool-arguments": when(ToolCallArgsEvent, lambda event: event.model_copy(update={"delta": '{"redacted":1}'})),
}


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("change", list(PROCESSOR_ERRORS))
def test_processor_replacements_are_checked_as_the_reference_checks_them(
    change: str, native_runs: dict[str, list[Any]]
) -> None:
    items = native_runs["real-run-0"]
    processor = processor_changing(PROCESSOR_ERRORS[change])
    assert_same(lambda package: observe_all(package, items, processor=processor))


def misuse(package: str, call: str) -> list[str]:
    observers = importlib.import_module(package)
    display = importlib.import_module(f"{package}.display")
    observer = observers.HarnessAguiStreamObserver()
    items = synthetic_errors()
    observer.observe(items[0])
    fold = display.DisplayFold("run-s")
    calls: dict[str, Callable[[], Any]] = {
        "observe(42)": lambda: observer.observe(42),
        "fold.events(42)": lambda: fold.events(42),
        "resume(42)": lambda: asyncio.run(observers.HarnessAguiStreamObserver().resume(42)),
        "resume(not fresh)": lambda: asyncio.run(observer.resume(stream(items[:1]))),
        "snapshot(not retained)": lambda: observers.HarnessAguiStreamObserver(retain_events=False).snapshot(),
        "snapshot(restored)": lambda: observers.HarnessAguiStreamObserver.restore(observer.export()).snapshot(),
        "snapshot(stop past the end)": lambda: observer.snapshot(start=0, stop=99),
        "snapshot(start after stop)": lambda: observer.snapshot(start=1, stop=0),
        "snapshot(negative start)": lambda: observer.snapshot(start=-1),
        "continuation of another run": lambda: display.DisplayFold(
            "run-other", continuation=fold.export().continuation
        ),
        "continuation of another content policy": lambda: display.DisplayFold(
            "run-s", continuation=fold.export().continuation, full_content=True
        ),
    }
    try:
        result = calls[call]()
        return [f"returned {result!r}"]
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return [failure(error), str(isinstance(error, ValueError)), str(isinstance(error, TypeError))]


MISUSE = [
    "observe(42)",
    "fold.events(42)",
    "resume(42)",
    "resume(not fresh)",
    "snapshot(not retained)",
    "snapshot(restored)",
    "snapshot(stop past the end)",
    "snapshot(start after stop)",
    "snapshot(negative start)",
    "continuation of another run",
    "continuation of another content policy",
]


@pytest.mark.parametrize("call", MISUSE)
def test_misuse_raises_the_same_error(call: str) -> None:
    printed = assert_same(lambda package: misuse(package, call))
    assert printed[0].startswith("raised ")


class _FloatIndex:
    """An `__index__` that breaks its contract (returns no `int`)."""

    def __index__(self) -> int:
        return 1.0  # type: ignore[return-value]

    def __lt__(self, other: object) -> bool:
        return False

    def __gt__(self, other: object) -> bool:
        return False


class _FailingIndex(_FloatIndex):
    """An `__index__` that raises."""

    def __index__(self) -> int:
        raise RuntimeError("no index today")


@pytest.mark.parametrize("retain_events", [True, False], ids=["retained", "not-retained"])
@pytest.mark.parametrize(
    "bounds",
    [
        {"start": "1"},
        {"stop": "3"},
        {"start": 1.5},
        {"start": 1.0},
        {"stop": [1]},
        {"start": True, "stop": 1},
        {"start": _FloatIndex()},
        {"start": _FailingIndex()},
    ],
    ids=["str-start", "str-stop", "float", "integral-float", "list", "bool", "float-index", "failing-index"],
)
def test_snapshot_bounds_of_other_types_raise_what_the_references_raise(
    bounds: dict[str, Any], retain_events: bool
) -> None:
    """The reference compares and slices with the bounds: an `int` (a `bool` too) works, anything else raises
    `TypeError`, after retention is checked. (Python's own messages differ by type: the class is compared.)"""

    def run(package: str) -> list[str]:
        observer = importlib.import_module(package).HarnessAguiStreamObserver(retain_events=retain_events)
        observer.observe(synthetic_errors()[0])
        try:
            return [f"returned {len(observer.snapshot(**bounds))} events"]
        except Exception as error:  # noqa: BLE001 - the error's class is what is compared
            return [type(error).__name__]

    assert_same(run)


# ---------------------------------------------------------------- characters the reference escapes


def test_del_counts_as_the_reference_counts_it() -> None:
    """`json.dumps` (ensure_ascii) writes DEL as `\\u007f`, six bytes: 6,000 of them put an observation over its
    32 KiB bound in the reference, which then holds `{"omitted": true}` as its value. Both on the carried lane (a usage report) and on the
    general path (a kind no lane takes), from native items and from their journal lines."""
    import datetime

    from a13n_harness import HarnessEvent, HarnessExtensionEvent

    at = datetime.datetime(2026, 12, 2, 4, 0, tzinfo=datetime.timezone.utc)
    items = [
        HarnessEvent(
            thread_id="t", run_id="r", sequence=0, occurred_at=at,
            event=HarnessExtensionEvent(kind="lifecycle", payload={"type": "run_started"}),
        )
    ]
    for sequence, (kind, count) in enumerate([("usage", 6000), ("diagnostic", 6000), ("usage", 40)], start=1):
        payload = {"type": "usage_report", "note": "\x7f" * count, "plain": "a\x7f"}
        event = HarnessExtensionEvent(kind=kind, payload=payload)
        items.append(HarnessEvent(thread_id="t", run_id="r", sequence=sequence, occurred_at=at, event=event))

    def fold(package: str) -> list[str]:
        display = importlib.import_module(f"{package}.display")
        fold = display.DisplayFold("r")
        for item in items:
            fold.fold(fold.events(item), item)
        return [fold.export().model_dump_json()]

    [checkpoint] = assert_same(fold)
    contents = [item["content"] for item in json.loads(checkpoint)["items"]]
    omitted = {"omitted": True}
    assert contents[1]["value"] == omitted and contents[2]["value"] == omitted and contents[3]["value"] != omitted
    import a13n_stream_rs

    assert a13n_stream_rs.replay([a13n_stream_rs.to_source_line(item) for item in items]) == checkpoint


# ---------------------------------------------------------------- a host changing the events it folds


def change_events(events: list[dict[str, Any]], step: int) -> None:
    """Change the handed-out event dicts in place the ways a host may before folding them: a value replaced, one
    replaced by an equal copy, a key removed and put back (so it moves last), a key added, one removed; one step in
    six leaves them as handed out."""
    if not events:
        return
    event = events[step % len(events)]
    way = step % 6
    if way == 0 and "delta" in event:
        event["delta"] = event["delta"] + " (edited)"
    elif way == 1 and "messageId" in event:
        event["messageId"] = "".join(list(event["messageId"]))
    elif way == 2 and "timestamp" in event:
        event["timestamp"] = event.pop("timestamp")
    elif way == 3:
        event["rawEvent"] = {"edited": step}
    elif way == 4 and "timestamp" in event:
        del event["timestamp"]


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES[:2])
def test_events_changed_before_folding_are_folded_as_changed(
    run_name: str, native_runs: dict[str, list[Any]]
) -> None:
    """`fold(fold.events(source), source)` reads the dicts it is given: one the host changed in place after
    `events` handed it out is folded as changed (the package keeps what it handed out only to spare reading back
    unchanged dicts)."""
    items = native_runs[run_name]

    def run(package: str) -> list[str]:
        display = importlib.import_module(f"{package}.display")
        fold = display.DisplayFold(items[0].run_id)
        printed = []
        for step, source in enumerate(items):
            events = fold.events(source)
            if step % 3 == 0:
                change_events(events, step)
            try:
                printed.append(dumped(fold.fold(events, source)))
            except Exception as error:  # noqa: BLE001 - the same failure, named the same, is the point
                printed.append(failure(error))
        printed.append(fold.export().model_dump_json())
        return printed

    printed = assert_same(run)
    assert any("(edited)" in line for line in printed)


# ---------------------------------------------------------------- the host's own idioms (a new-user trial)


def test_a_host_reads_and_edits_the_fold_as_the_references(native_runs: dict[str, list[Any]]) -> None:
    """`fold.changed -= published` raised AttributeError (a read-only property: augmented assignment sets the
    attribute back), and so did `fold.changed = set()`; `fold.next` (what paging preserves) and
    `fold.response_groups` were missing."""
    items = native_runs[NATIVE_RUN_NAMES[0]]

    def run(package: str) -> list[str]:
        DisplayFold = importlib.import_module(f"{package}.display").DisplayFold
        fold = DisplayFold(items[0].run_id)
        printed = []
        for index, item in enumerate(items):
            fold.fold(fold.events(item), item)
            if index % 7 == 6:
                published = sorted(fold.changed)[::2]
                printed.append(dumps(sorted(fold.changed - set(published[:1]))))
                printed.append(dumps(sorted(fold.changed & set(published))))
                printed.append(dumps(sorted(fold.changed | {"x"})))
                fold.changed -= set(published)
                printed.append(dumps(sorted(fold.changed)))
            if index % 5 == 0:
                printed.append(f"{fold.next} {dumps(dict(fold.response_groups))}")
        fold.changed = set()
        printed.append(dumps(sorted(fold.changed)))
        return printed

    assert_same(run)


def test_a_journal_line_that_is_no_item_is_caught_as_the_references_type_error() -> None:
    """The reference raises TypeError for any value that is not a native item; this package reads a journal line
    (str, bytes, dict) too, and one that is no source item raised InputError alone, past a host's
    `except TypeError`."""
    from a13n_stream_rs import HarnessAguiStreamObserver, InputError, SourceLineError
    from a13n_stream_rs.display import DisplayFold

    for bad in ["hello", b"hello", {}]:
        for call in (HarnessAguiStreamObserver().observe, DisplayFold("r").events):
            with pytest.raises(TypeError) as raised:
                call(bad)
            assert isinstance(raised.value, SourceLineError) and isinstance(raised.value, InputError)
            assert raised.value.kind in {"json", "missing"}, raised.value


def test_tool_result_content_projects_native_content_as_the_reference() -> None:
    """Native content (`ImageUrl`, `BinaryContent`) raised `InputError: ... has no JSON form`, and parts came back
    as dicts where the reference returns `ag_ui` part models."""
    from pydantic_ai.messages import BinaryContent, ImageUrl

    values: list[Any] = [
        [ImageUrl(url="https://example.com/y.png")],
        BinaryContent(data=b"abc", media_type="image/png"),
        [BinaryContent(data=b"abc", media_type="image/png"), "text", {"a": 1}],
        {"a": [1, 2]},
        "plain",
    ]

    def run(package: str) -> list[str]:
        project = importlib.import_module(package).tool_result_content
        printed = []
        for value in values:
            projected = project(value)
            printed.append(projected if isinstance(projected, str) else dumped(projected))
            printed.append(type(projected).__name__ + ":" + ",".join(type(part).__name__ for part in projected))
        return printed

    assert_same(run)


def test_a_lowered_results_execution_value_is_read_as_python_indexes_its_content() -> None:
    """Found by a review: presenting a lowered result's execution value spliced it into its content as a list,
    whatever the content and marker, so a dict's content raised `TypeError` or `IndexError`, or turned into a list
    of its keys. Then found by a differential sweep: the reference reads `content[result_index]` as Python does (a
    dict by its key, an `int` key too; a string by a code point; a negative index from the end), where such results
    were refused. A marker past the end is refused (`InputError`; the reference raises `IndexError`)."""
    import enum
    from datetime import UTC, datetime

    from a13n_harness import HarnessEvent
    from pydantic_ai.messages import FunctionToolResultEvent, ToolReturnPart

    from a13n_stream_rs import InputError

    class Color(enum.Enum):
        RED = "red"

    at = datetime(2026, 1, 1, tzinfo=UTC)

    def item(content: Any, index: Any, outcome: str) -> Any:
        metadata = {"a13n.tool-content": {"result_index": index}}
        part = ToolReturnPart(tool_name="f", tool_call_id="c", content=content, outcome=outcome, metadata=metadata)
        return HarnessEvent(thread_id="t", run_id="r", sequence=0, occurred_at=at, event=FunctionToolResultEvent(part=part))

    found = [({"k": Color.RED}, "k"), ({1: Color.RED}, 1), ({0: Color.RED}, 0), ("ab", 1), (["a", Color.RED], -1)]
    for content, index in found:
        for outcome in ("success", "failed"):
            assert_same(observed_and_folded([item(content, index, outcome)]))
    for outcome in ("success", "failed"):
        fold = importlib.import_module(f"{OURS}.display").DisplayFold("r")
        with pytest.raises(InputError):
            fold.fold(fold.events(item([Color.RED], 3, outcome)), item([Color.RED], 3, outcome))


def test_tool_result_content_projects_records_scalars_and_bytes_as_the_reference() -> None:
    """Found by a new user's trial: `tool_result_content` raised `InputError: ... has no JSON form` for a model, a
    dataclass, an `Enum`, a `UUID`, a dict with `int` keys or holding an `ImageUrl`, and `bytes`, which the
    reference projects (a record as its dump, a scalar as its JSON text, bytes by their size); NaN raises as the
    reference's does."""
    import dataclasses
    import decimal
    import enum
    import math
    import uuid
    from datetime import UTC, datetime

    from pydantic import BaseModel
    from pydantic_ai.messages import ImageUrl

    class Color(enum.Enum):
        RED = "red"

    class Point(BaseModel):
        x: int
        y: int

    @dataclasses.dataclass
    class Pair:
        number: int
        name: str

    image = ImageUrl(url="https://example.com/a.png")
    values: list[Any] = [
        Point(x=1, y=2),
        Pair(1, "two"),
        Color.RED,
        uuid.UUID(int=1),
        decimal.Decimal("2.50"),
        datetime(2020, 1, 1, tzinfo=UTC),
        {1: "a", 2: [Color.RED]},
        {"image": image, "when": datetime(2020, 1, 1, tzinfo=UTC)},
        [Color.RED, image, Pair(2, "x")],
        b"abc",
        [b"ab", "text"],
        {3, 4},
        {"x": math.nan},
    ]

    def run(package: str) -> list[str]:
        project = importlib.import_module(package).tool_result_content
        printed = []
        for value in values:
            try:
                projected = project(value)
            except ValueError as error:
                printed.append(f"{type(error).__name__}: {error}")
                continue
            printed.append(projected if isinstance(projected, str) else dumped(projected))
        return printed

    printed = assert_same(run)
    assert printed[2] == '"red"' and printed[-1] == "ValueError: JSON numbers must be finite"


def test_bytes_in_tool_results_and_generated_files_are_observed_as_the_reference() -> None:
    """Found by a new user's trial: a tool's returned bytes reached the events as text (or, not UTF-8, raised
    `UnicodeDecodeError` from `observe`, `resume` and `to_source_line`) where the reference describes them
    (`{"payload_omitted": true, "size_bytes": N}`, a record holding media omitted whole); and a model-made file's
    `BinaryContent` lost its computed `identifier` (and a URL its `media_type`) in the carried event."""
    import dataclasses
    from datetime import UTC, datetime

    from a13n_harness import HarnessEvent
    from pydantic import BaseModel, Field
    from pydantic_ai.messages import (
        BinaryContent,
        FilePart,
        FunctionToolResultEvent,
        ImageUrl,
        PartEndEvent,
        PartStartEvent,
        ToolReturnPart,
    )

    @dataclasses.dataclass
    class Attachment:
        name: str
        data: bytes

    class Report(BaseModel):
        title: str
        image: ImageUrl

    class Aliased(BaseModel):
        full_name: str = Field(alias="fullName")

    returned: list[Any] = [
        {"b": b"hello"},
        {"file": b"\x89PNG\r\n\x1a\n"},
        [b"a", bytearray(b"bc"), "text"],
        Attachment(name="x", data=b"\xff"),
        Report(title="t", image=ImageUrl(url="https://example.com/a.png")),
        # A record without media: its type's dump by field name, as the reference projects it (it was by alias).
        {"person": Aliased(fullName="x")},
        {"plain": [1, "two"]},
    ]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    items: list[Any] = []
    for index, content in enumerate(returned):
        for outcome in ("success", "failed"):
            part = ToolReturnPart(tool_name="get", tool_call_id=f"c{index}", content=content, outcome=outcome)
            items.append(FunctionToolResultEvent(part=part))
    generated = FilePart(content=BinaryContent(data=b"\x89PNG", media_type="image/png"))
    items += [PartStartEvent(index=0, part=generated), PartEndEvent(index=0, part=generated)]
    native = [HarnessEvent(thread_id="t", run_id="r", sequence=n, occurred_at=at, event=e) for n, e in enumerate(items)]

    printed = assert_same(observed_and_folded(native))
    assert any('\\"size_bytes\\":8' in line for line in printed), "the PNG's bytes are described"
    assert any('"identifier":"4effda"' in line for line in printed), "the file's identifier is kept"


def test_nan_and_infinity_in_tool_results_raise_where_the_reference_raises() -> None:
    """Found in the list of differences: a tool's value holding NaN or an infinity was carried with `null` where
    the reference raises `ValueError("JSON numbers must be finite")`: `observe` (and so `events`) for a successful
    return, `fold` for a result the observer does not present (its text fails the call's item); a record holding one
    raises from `observe` whatever the outcome (the reference projects the record's dump); another result of a
    lowered tool's content is not read."""
    import dataclasses
    import math

    @dataclasses.dataclass
    class Reading:
        value: float

    lowered = {"a13n.tool-content": {"result_index": 0}}
    returned: list[tuple[Any, Optional[dict[str, Any]]]] = [
        ({"x": math.nan}, None),
        ([1.0, [math.inf]], None),
        (-math.inf, None),
        (("ok", {"deep": {"deeper": [math.nan]}}), None),
        ({"reading": Reading(math.nan)}, None),
        (["shown", {"hidden": math.nan}], lowered),
        ([{"shown": math.inf}, "hidden"], lowered),
        ({"fine": 1.5}, None),
    ]
    native = called_and_returned(returned, ("success", "retried", "failed"))

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        observer = module.HarnessAguiStreamObserver()
        display = importlib.import_module(f"{package}.display")
        fold = display.DisplayFold("r")
        printed = []
        for item in native:
            try:
                printed.append(dumped(observer.observe(item)))
            except ValueError as error:
                printed.append(f"observe: {type(error).__name__}: {error}")
            before = fold.export()
            try:
                printed.append(json.dumps(fold.fold(fold.events(item), item), default=str))
            except ValueError as error:
                printed.append(f"fold: {type(error).__name__}: {error}")
                # The reference's fold raises after folding the item's events (this package's changes nothing):
                # both go on from the display before the item.
                fold = display.DisplayFold.restore(before)
        printed.append(fold.export().model_dump_json())
        return printed

    printed = assert_same(run)
    refused = "ValueError: JSON numbers must be finite"
    # `observe`: the six successful returns of a non-finite value, and the record's other two outcomes; `fold`:
    # every result holding one (six values, three outcomes each).
    assert sum(line == f"observe: {refused}" for line in printed) == 8
    assert sum(line == f"fold: {refused}" for line in printed) == 18


def test_a_tool_value_whose_json_form_is_a_string_is_presented_as_its_json_text() -> None:
    """Found by a new user's trial: a tool returning an `Enum`, a `UUID`, a `Decimal`, a `datetime`, a `date`, a
    `timedelta` or a model whose dump is a string gave `TOOL_CALL_RESULT` content `a` where the reference gives
    `"a"` (what is not a `str` is presented as its JSON text), and the display fold named a failed call of one by
    that text too; items, observed lines and checkpoints differed, and nothing raised. In a list holding native
    content each such item is its JSON text; in one without, the list's."""
    import decimal
    import enum
    import uuid
    from datetime import UTC, date, datetime, timedelta

    from pydantic import RootModel
    from pydantic_ai.messages import ImageUrl

    class Color(enum.Enum):
        RED = "red"

    class Level(str, enum.Enum):
        HIGH = "high"

    class Count(enum.IntEnum):
        ONE = 1

    image = ImageUrl(url="https://example.com/a.png")
    lowered = {"a13n.tool-content": {"result_index": 0}}
    returned: list[tuple[Any, Optional[dict[str, Any]]]] = [
        (Color.RED, None),
        (Level.HIGH, None),
        (Count.ONE, None),
        (uuid.UUID(int=3), None),
        (decimal.Decimal("1.50"), None),
        (datetime(2020, 1, 1, tzinfo=UTC), None),
        (date(2020, 1, 2), None),
        (timedelta(seconds=3), None),
        (RootModel[str]("rooted"), None),
        ({"nested": Color.RED}, None),
        ([Color.RED, "plain"], None),
        ([Color.RED, image, "plain", {"k": Color.RED}], None),
        ([Color.RED, "hidden"], lowered),
        ("quoted \"text\"", None),
    ]
    native = called_and_returned(returned, ("success", "failed"))

    printed = assert_same(observed_and_folded(native))
    assert any('"content":"\\"red\\""' in line for line in printed), "an Enum's text keeps its quotes"


def test_taking_the_changed_ids_and_copying_the_items_keep_what_they_took() -> None:
    """Found by a new user's trial: `fold.changed` and `fold.items` are views of the fold, so `to_publish,
    fold.changed = fold.changed, set()` published nothing, and `copy.copy(fold.items)` grew with the next fold;
    `fold.items.copy()`, `|`, `copy.deepcopy` and `pickle` of them failed. The reference's are a set and a dict."""
    import copy
    import pickle

    first = [{"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant", "timestamp": 1000},
             {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi", "timestamp": 1001}]
    second = [{"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "assistant", "timestamp": 1002}]

    def run(package: str) -> list[str]:
        fold = importlib.import_module(f"{package}.display").DisplayFold("run")
        fold.fold(first)
        to_publish, fold.changed = fold.changed, set()
        pending = fold.changed
        fold.fold(second)
        kept = fold.changed
        fold.changed = set()
        items, copied, deep = fold.items.copy(), copy.copy(fold.items), copy.deepcopy(fold.items)
        merged = fold.items | {}
        pickled = pickle.loads(pickle.dumps(fold.items))
        changed = pickle.loads(pickle.dumps(kept))
        fold.fold([{"type": "TEXT_MESSAGE_START", "messageId": "m3", "role": "assistant", "timestamp": 1003}])
        return [
            f"published {sorted(to_publish)}, pending {sorted(pending)}, kept {sorted(kept)}, now {sorted(fold.changed)}",
            f"copies {len(items)} {len(copied)} {len(deep)} {len(merged)} {len(pickled)} of {len(fold.items)}",
            f"types {type(items).__name__} {type(copied).__name__} {type(pickled).__name__} {type(changed).__name__}",
            json.dumps({key: item.model_dump(mode="json") for key, item in deep.items()}),
        ]

    printed = assert_same(run)
    assert printed[0].startswith("published ['itm_") and "now ['itm_" in printed[0]


def test_observers_folds_and_assemblers_may_be_held_weakly() -> None:
    """Found by a new user's trial: a registry of observers in a `WeakValueDictionary` raised `TypeError` (cannot
    create weak reference)."""
    import gc
    import weakref

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        made = [module.HarnessAguiStreamObserver(), module.HarnessAguiObserver(), module.CustomEventAssembler(),
                importlib.import_module(f"{package}.display").DisplayFold("run")]
        registry = weakref.WeakValueDictionary(enumerate(made))
        held = [type(registry[index]).__name__ for index in range(len(made))]
        del made
        gc.collect()
        return held + [f"left {len(registry)}"]

    assert assert_same(run)[-1] == "left 0"


def test_an_assemblers_gap_is_cleared_and_its_bounds_read_and_changed_as_the_references() -> None:
    """Found in the list of differences: `assembler.gap = False` (clearing the flag once a gap notice is shown)
    raised `AttributeError`, and `max_bytes` / `max_pending` could not be read or changed."""

    def run(package: str) -> list[str]:
        fragments = importlib.import_module(f"{package}.fragments")
        event = {"type": "CUSTOM", "timestamp": 1, "name": "a13n.big", "value": "x" * 100_000}
        big = importlib.import_module("ag_ui.core").CustomEvent(**event)
        frames = [frame.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for frame in fragments.fragment_custom_event(big, identity="big")]
        assembler = fragments.CustomEventAssembler(max_bytes=1_000_000, max_pending=2)
        printed = [f"bounds {assembler.max_bytes} {assembler.max_pending} gap {assembler.gap}"]
        printed.append(f"lost a frame: {[assembler.accept(frame) for frame in frames[1:]]} gap {assembler.gap}")
        assembler.gap = False
        assembler.max_bytes = 50_000
        printed.append(f"cleared: gap {assembler.gap}, bounds {assembler.max_bytes} {assembler.max_pending}")
        outcome = [assembler.accept(frame) is None for frame in frames]
        printed.append(f"over the new budget: {outcome} gap {assembler.gap}")
        assembler.gap, assembler.max_bytes, assembler.max_pending = False, 1_000_000, 4
        whole = [assembler.accept(frame) for frame in frames][-1]
        printed.append(f"whole again: {whole == event} gap {assembler.gap} {assembler.export().model_dump_json()}")
        return printed

    printed = assert_same(run)
    assert printed[-1].startswith("whole again: True gap False")


def test_an_assembler_passes_any_payload_but_a_fragment_as_it_is() -> None:
    """Found by a new user's trial: `accept` read every payload as JSON first, so a payload that is no fragment
    raised `InputError` when it was a mapping other than a `dict` or held NaN or an object with no JSON form; the
    reference returns it, the same object."""
    from types import MappingProxyType

    payloads: list[Any] = [
        MappingProxyType({"name": "x", "value": 1}),
        {"name": "x", "value": float("nan")},
        {"name": "x", "value": object()},
        {"value": {"id": "i", "index": 0, "count": 2, "data": "ab"}},
    ]

    def run(package: str) -> list[str]:
        assembler = importlib.import_module(package).CustomEventAssembler()
        return [f"{type(payload).__name__} {assembler.accept(payload) is payload}" for payload in payloads]

    assert all(line.endswith("True") for line in assert_same(run))


def test_a_processor_that_refers_back_to_its_fold_or_observer_is_freed_with_them() -> None:
    """Found by a new user's trial: a host object holding a fold and an observer whose processor is its own bound
    method (a cycle through the processor) was never freed, where the reference's is: the Rust classes did not show
    the garbage collector the processor they hold (200 runs, 200 hosts alive, +197 MB)."""
    import gc
    import weakref

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        display = importlib.import_module(f"{package}.display")

        class Host:
            def __init__(self) -> None:
                self.fold = display.DisplayFold("r", processor=self.process)
                self.restored = display.DisplayFold.restore(self.fold.export(), processor=self.process)
                self.observer = module.HarnessAguiStreamObserver(processor=self.process)
                self.single = module.HarnessAguiObserver(processor=self.process)
                self.again = module.HarnessAguiStreamObserver.restore(self.observer.export(), processor=self.process)

            def process(self, source: Any, event: Any) -> Any:
                return event

        hosts = []
        for _ in range(20):
            host = Host()
            host.fold.fold([{"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "timestamp": 1}])
            hosts.append(weakref.ref(host))
            del host
        gc.collect()
        return [f"alive {sum(ref() is not None for ref in hosts)}"]

    assert assert_same(run) == ["alive 0"]


def test_arguments_of_the_wrong_type_or_range_raise_value_errors() -> None:
    """Found by a new user's trial: bad constructor and snapshot arguments raised `TypeError` or `OverflowError`
    (from the conversion to Rust integers), which a host's `except ValueError` misses: the reference refuses them
    with a `ValueError` (its own, or Pydantic's `ValidationError` when the fold is exported)."""

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        display = importlib.import_module(f"{package}.display")
        calls: list[Callable[[], Any]] = [
            lambda: display.DisplayFold(5).export(),
            lambda: display.DisplayFold("r", attempt=-1).export(),
            lambda: display.DisplayFold("r", first=-3).export(),
            lambda: module.CustomEventAssembler(max_pending=-1),
            lambda: module.CustomEventAssembler(max_bytes=0),
            lambda: module.HarnessAguiStreamObserver().snapshot(start=10**30),
            lambda: module.HarnessAguiStreamObserver().snapshot(start=-(10**30)),
            lambda: module.HarnessAguiStreamObserver().snapshot(stop=10**30),
        ]
        printed = []
        for call in calls:
            try:
                call()
                printed.append("accepted")
            except ValueError:
                printed.append("ValueError")
        fold = display.DisplayFold("r", attempt=1.0)
        printed.append(fold.export().continuation.position.model_dump_json())
        return printed

    assert assert_same(run)[:8] == ["ValueError"] * 8


def test_resume_observes_through_a_subclasss_own_observe(native_runs: dict[str, list[Any]]) -> None:
    """Found by a new user's trial: `resume` observed the history in Rust, past a subclass's `observe` override
    (here one that skips usage reports), where the reference's `resume` observes through it."""
    items = native_runs[NATIVE_RUN_NAMES[0]]

    def run(package: str) -> list[str]:
        base = importlib.import_module(package).HarnessAguiStreamObserver

        class SkipUsage(base):  # type: ignore[misc, valid-type]
            def observe(self, item: Any) -> Any:
                event = getattr(item, "event", None)
                if getattr(event, "kind", None) == "usage":
                    return ()
                return super().observe(item)

        async def history() -> AsyncIterator[Any]:
            for item in items[:-3]:
                yield item

        observer = SkipUsage(retain_events=True)
        asyncio.run(observer.resume(history()))
        printed = [f"{type(observer).__name__} {observer.event_count} events", observer.export().model_dump_json()]
        printed.append(dumped(observer.snapshot()))
        for item in items[-3:]:
            printed.append(dumped(observer.observe(item)))
        return printed

    printed = assert_same(run)
    assert not any("a13n.harness.usage" in line for line in printed)


# Names of the reference's submodules this package does not offer: the display module's own helpers, which no host
# code on the page uses (the README lists them).
NOT_OFFERED: dict[str, set[str]] = {
    "observer": set(),
    "messages": set(),
    "content": set(),
    "memory": set(),
    "fragments": set(),
    "display": {"bound_event", "extend", "fragment", "open_tool_calls"},
}


def _public_names(module: Any) -> set[str]:
    """A reference module's public names: its package's functions, classes and models, and its constants."""
    return {
        name
        for name in dir(module)
        if not name.startswith("_")
        and (
            getattr(getattr(module, name), "__module__", "").startswith(REFERENCE)
            or (name.isupper() and isinstance(getattr(module, name), (str, int, frozenset)))
        )
    }


@pytest.mark.parametrize("module", sorted(NOT_OFFERED))
def test_the_references_submodules_are_here(module: str) -> None:
    """`from a13n_stream_protocol.observer import ObserverContinuation` could not be ported by changing the import:
    this package had no `observer`, `fragments`, `content` or `memory` module. Found by a new user's trial: the
    memory source models and `memory_sources`, `public_tool_value`, `FRAGMENT_EVENT_NAME` and the display's
    `FRAGMENTS` and `AUTHORED_INPUT_EVENT_NAMES` were missing too."""
    reference = importlib.import_module(f"{REFERENCE}.{module}")
    ours = importlib.import_module(f"{OURS}.{module}")
    public = _public_names(reference)
    missing = {name for name in public if not hasattr(ours, name)}
    assert missing == NOT_OFFERED[module]
    for name in public - missing:
        value = getattr(reference, name)
        if isinstance(value, (str, int, frozenset)):
            assert getattr(ours, name) == value, name
            continue
        top = getattr(importlib.import_module(OURS), name, None) or getattr(
            importlib.import_module(f"{OURS}.display"), name, None
        )
        assert top is None or getattr(ours, name) is top, name


def test_memory_sources_and_public_tool_value_read_as_the_reference() -> None:
    """The names the trial found missing give what the reference's give."""
    from pydantic_ai.messages import BinaryContent, ImageUrl

    record = {"id": "r1", "sha256": "ab"}
    payloads: list[Any] = [
        {"type": "memory_recall", "memories": [{"memory": "m", "recall": "recalled", "records": [record]}]},
        {"type": "memory_recall", "memories": [{"memory": "m", "recall": "recalled"}]},
        {"type": "memory_context", "memories": [{"memory": "m", "context": "full", "files": [
            {"path": "a.md", "sha256": "cd", "bytes": 3}], "cursor": "c1", "sources_truncated": 1}]},
        {"type": "memory_context", "memories": [{"memory": "m", "context": "failed"}]},
        {"type": "memory_context", "memories": [{"memory": "m", "context": "weird"}]},
        {"type": "memory_recall", "memories": "no"},
        {"type": "other"},
        {},
    ]
    values: list[Any] = [
        b"abc",
        {"image": ImageUrl(url="https://example.com/a.png"), "raw": bytearray(b"xy")},
        (1, [BinaryContent(data=b"z", media_type="image/png")]),
        "plain",
        {"n": 1},
    ]

    def run(package: str) -> list[str]:
        memory = importlib.import_module(f"{package}.memory")
        content = importlib.import_module(f"{package}.content")
        printed = []
        for payload in payloads:
            sources = memory.memory_sources(payload)
            printed.append("None" if sources is None else "[" + ",".join(s.model_dump_json() for s in sources) + "]")
        printed += [json.dumps(content.public_tool_value(value)) for value in values]
        printed.append(memory.RecordSource(**record).model_dump_json())
        return printed

    assert_same(run)



def large_content_items() -> list[Any]:
    """Native items whose content passes the display's bounds: a long text, long arguments and result, and an
    observation over the observation bound."""
    from datetime import UTC, datetime

    from a13n_harness import HarnessEvent, HarnessExtensionEvent
    from pydantic_ai.messages import (
        FunctionToolCallEvent,
        FunctionToolResultEvent,
        PartEndEvent,
        PartStartEvent,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )

    at = datetime(2026, 1, 1, tzinfo=UTC)
    call = ToolCallPart(tool_name="f", args={"q": "b" * 300_000}, tool_call_id="c1")
    events = [
        HarnessExtensionEvent(kind="lifecycle", payload={"type": "run_started"}),
        PartStartEvent(index=0, part=TextPart(content="a" * 300_000)),
        PartEndEvent(index=0, part=TextPart(content="a" * 300_000)),
        FunctionToolCallEvent(part=call),
        FunctionToolResultEvent(part=ToolReturnPart(tool_name="f", tool_call_id="c1", content="c" * 300_000)),
        HarnessExtensionEvent(kind="diagnostic", payload={"blob": "d" * 40_000}),
    ]
    return [HarnessEvent(thread_id="t", run_id="r", sequence=n, occurred_at=at, event=e) for n, e in enumerate(events)]


def policy_assigned(package: str, items: list[Any], restored: bool, assigned: dict[str, bool]) -> list[str]:
    """A fold made (or restored) with the default policy, its flags then assigned as attributes, then fed the rest:
    the events and observed entries it hands out, and its checkpoint."""
    display = importlib.import_module(f"{package}.display")
    fold = display.DisplayFold("r")
    printed = [json.dumps(fold.fold(fold.events(items[0]), items[0]), default=str)]
    if restored:
        fold = display.DisplayFold.restore(fold.export())
    for name, value in assigned.items():
        setattr(fold, name, value)
    printed.append(f"{fold.full_content} {fold.retain_content}")
    for item in items[1:]:
        events = fold.events(item)
        printed.append(json.dumps(events, default=str))
        printed.append(json.dumps(fold.fold(events, item), default=str))
    printed.append(fold.export().model_dump_json())
    return printed


@pytest.mark.parametrize("restored", [False, True], ids=["made", "restored"])
@pytest.mark.parametrize(
    "assigned",
    [{"retain_content": True}, {"full_content": True}, {"full_content": True, "retain_content": True}],
    ids=["retain", "full", "both"],
)
def test_assigning_the_content_flags_changes_what_the_fold_keeps_as_the_references_does(
    restored: bool, assigned: dict[str, bool]
) -> None:
    """The reference's `restore` takes no `retain_content`: a host restores, then assigns it. The fold's items
    follow the assigned flags, while the events the fold's observer hands on stay bounded as when it was made."""
    items = large_content_items()
    printed = assert_same(lambda package: policy_assigned(package, items, restored, assigned))
    unassigned = policy_assigned(OURS, items, restored, {})
    assert printed[-1] != unassigned[-1] and len(printed[-1]) > len(unassigned[-1])


def test_the_items_view_reverses_and_prints_as_the_references_dict(native_runs: dict[str, list[Any]]) -> None:
    """A host logs `fold.items` or walks it newest first as it does the reference's dict. (Its items' times print
    their `tzinfo`, Pydantic's `TzInfo(0)` here, `timezone.utc` in a live reference fold: a documented difference.)"""

    def run(package: str) -> list[str]:
        fold = importlib.import_module(f"{package}.display").DisplayFold("r")
        for item in native_runs["real-run-0"][:40]:
            fold.fold(fold.events(item), item)
        printed = repr(fold.items).replace("tzinfo=TzInfo(0)", "tzinfo=datetime.timezone.utc")
        return [json.dumps(list(reversed(fold.items))), printed]

    printed = assert_same(run)
    assert printed[1].startswith("{'itm_")


CONSTRUCTOR_MISUSE: dict[str, Callable[[Any, Any], Any]] = {
    "stream observer, positional": lambda m, d: m.HarnessAguiStreamObserver(None),
    "observer, two positional": lambda m, d: m.HarnessAguiObserver(1, 2),
    "stream observer, positional and keyword-only": lambda m, d: m.HarnessAguiStreamObserver(1, 2, retain_events=False),
    "observer, positional and two keyword-only": lambda m, d: m.HarnessAguiObserver(1, processor=None, retain_events=1),
    "stream observer, positional and unknown keyword": lambda m, d: m.HarnessAguiStreamObserver(1, bogus=1),
    "fold, no run": lambda m, d: d.DisplayFold(),
    "fold, three positional": lambda m, d: d.DisplayFold("r", [], 1),
    "fold, three positional and keyword-only": lambda m, d: d.DisplayFold("r", None, 1, full_content=True),
    "fold, three positional and unknown keyword": lambda m, d: d.DisplayFold("r", None, 1, bogus=1),
    "fold, unknown keyword": lambda m, d: d.DisplayFold("r", x=1),
    "assembler, positional": lambda m, d: m.CustomEventAssembler(1, 2, 3),
    "assembler, positional and keyword-only": lambda m, d: m.CustomEventAssembler(1, max_bytes=10),
}


@pytest.mark.parametrize("call", list(CONSTRUCTOR_MISUSE))
def test_constructor_misuse_is_said_of_init_as_the_reference_says_it(call: str) -> None:
    """Python's own `TypeError` of `__init__`, with `self` counted, not of a private method the package uses; the
    stream observer's names `HarnessAguiObserver.__init__`, which it inherits. Positional arguments beside
    keyword-only ones are counted as Python counts them (`but 3 positional arguments (and 1 keyword-only argument)
    were given`), and an unknown keyword is reported before too many positional arguments, as Python reads the
    keywords first (both found by a new user's trial)."""

    def run(package: str) -> list[str]:
        module, display = importlib.import_module(package), importlib.import_module(f"{package}.display")
        try:
            CONSTRUCTOR_MISUSE[call](module, display)
        except TypeError as error:
            return [str(error)]
        return ["made"]

    assert ".__init__() " in assert_same(run)[0]


def test_the_stream_observer_is_an_observer_as_the_references_is() -> None:
    """`HarnessAguiStreamObserver` subclasses `HarnessAguiObserver` in the reference: a host's
    `isinstance(observer, HarnessAguiObserver)`, or a function typed to take one, holds for both. Found by a review of
    the README's list of differences, where it was one."""

    def run(package: str) -> list[str]:
        module = importlib.import_module(package)
        stream, single = module.HarnessAguiStreamObserver, module.HarnessAguiObserver

        class Host(stream):  # type: ignore[misc, valid-type]
            def __init__(self, tag: str = "restored", **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self.tag = tag

        observer = stream(retain_events=False)
        restored = Host.restore(observer.export())
        return [
            repr([cls.__name__ for cls in stream.__mro__]),
            repr(issubclass(stream, single)),
            repr(isinstance(observer, single)),
            repr((type(stream.restore(observer.export())).__name__, type(single.restore(observer.export())).__name__)),
            repr((type(restored).__name__, isinstance(restored, single), restored.tag)),
            repr(isinstance(single(), stream)),
        ]

    printed = assert_same(run)
    assert printed[1] == "True"


def test_the_references_submodules_are_attributes_after_importing_the_package() -> None:
    """After `import a13n_stream_protocol`, its `observer`, `fragments`, `content` and `messages` modules are the
    package's attributes (its `__init__` imports them); `a13n_stream_rs.observer.ObserverContinuation` raised
    `AttributeError` unless something had imported the module before. Found by a new user's trial."""
    script = (
        "import importlib, sys; package = importlib.import_module(sys.argv[1]); "
        "print(package.observer.ObserverContinuation.__name__, package.fragments.__name__.split('.')[1], "
        "package.content.__name__.split('.')[1], sorted(package.messages.AUTHORED_INPUT_EVENT_NAMES), "
        "package.messages.project_input_content.__module__)"
    )

    def run(package: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", script, package], capture_output=True, text=True, check=True)
        return [done.stdout]

    assert "ObserverContinuation" in assert_same(run)[0]


def test_observers_and_folds_print_their_ids_as_python_does(native_runs: dict[str, list[Any]]) -> None:
    """`repr` of an observer and a fold writes their ids as Python's `repr` does. It printed Rust's debug form,
    `thread_id=Some("thread-1")` (found by a new user's trial)."""
    from a13n_stream_rs import HarnessAguiStreamObserver
    from a13n_stream_rs.display import DisplayFold

    items = native_runs["real-run-0"]
    observer = HarnessAguiStreamObserver(retain_events=False)
    fresh = repr(observer)
    observer.observe(items[0])
    fold = DisplayFold(items[0].run_id)
    assert fresh == "HarnessAguiStreamObserver(thread_id=None, run_id=None, event_count=0)"
    assert repr(observer) == (
        f"HarnessAguiStreamObserver(thread_id={items[0].thread_id!r}, run_id={items[0].run_id!r}, event_count=0)"
    )
    assert repr(fold).startswith(f"DisplayFold(run_id={items[0].run_id!r}, ")


def test_a_native_item_whose_time_is_no_datetime_raises_the_references_error() -> None:
    """A host that rebuilds a `HarnessEvent` with `occurred_at` as text (the dataclass does not check it)."""
    from a13n_harness import HarnessEvent, HarnessExtensionEvent

    item = HarnessEvent(
        thread_id="t",
        run_id="r",
        sequence=0,
        occurred_at="2026-01-01T00:00:00+00:00",  # type: ignore[arg-type]
        event=HarnessExtensionEvent(kind="lifecycle", payload={"type": "run_started"}),
    )

    def run(package: str) -> list[str]:
        try:
            importlib.import_module(package).HarnessAguiStreamObserver().observe(item)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return [failure(error)]
        return ["observed"]

    assert assert_same(run) == ["raised AttributeError: 'str' object has no attribute 'timestamp'"]

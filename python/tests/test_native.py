"""A native Harness item and its journal line are the same source item.

`to_source_line(item)` writes the line the shared corpus's recorder writes (`oracle/harness_json.py`'s
`dump_source`, through Python's compact `json.dumps`), and every API gives the same output, byte for byte, whether
it is handed the native items of a real offline Harness run or their lines.

Needs a13n-harness (Python >= 3.13) for the native items; skips otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any, Callable

import pytest

from a13n_stream_rs import HarnessAguiObserver, HarnessAguiStreamObserver, replay, to_source_line
from a13n_stream_rs.display import DisplayFold

from conftest import NATIVE_RUN_NAMES, ORACLE
from test_corpus import dumps, error_line, fold_source_line, history, live_fold_line, observe_line


def local_dump_source(item: Any) -> dict[str, Any]:
    """The oracle's `harness_json.dump_source` (for a checkout without the oracle beside it)."""
    from a13n_harness import HarnessEvent, HarnessExtensionEvent, HarnessRunResultEvent
    from a13n_harness.tools.deferred import DeferredToolRequests
    from pydantic import TypeAdapter

    def adapter(t: type) -> TypeAdapter[Any]:
        return TypeAdapter(t)

    line: dict[str, Any] = {
        "thread_id": item.thread_id,
        "run_id": item.run_id,
        "sequence": item.sequence,
        "occurred_at": item.occurred_at.isoformat(),
    }
    if isinstance(item, HarnessRunResultEvent):
        result = item.result
        out: dict[str, Any] = {"status": result.status}
        if result.status == "completed":
            try:
                out["output"] = result.output_json()
            except (TypeError, ValueError):
                out["output"] = None
                out["output_omitted"] = True
        usage = result.usage
        out["usage"] = {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "details": dict(usage.details),
        }
        if result.failure is not None:
            out["failure"] = result.failure.model_dump(mode="json", by_alias=True)
        if result.deferred is not None:
            out["deferred"] = adapter(DeferredToolRequests).dump_python(result.deferred, mode="json", by_alias=True)
        line["result"] = out
    else:
        assert isinstance(item, HarnessEvent)
        event = item.event
        if isinstance(event, HarnessExtensionEvent):
            line["event"] = event.model_dump(mode="json", by_alias=True)
        else:
            line["event"] = adapter(type(event)).dump_python(event, mode="json", by_alias=True, warnings="error")
    return line


def oracle_dump_source() -> Callable[[Any], dict[str, Any]]:
    """The recorder's own `dump_source` when the oracle is beside the checkout, else the copy above."""
    if (ORACLE / "harness_json.py").is_file():
        sys.path.insert(0, str(ORACLE))
        import harness_json

        return harness_json.dump_source  # type: ignore[no-any-return]
    return local_dump_source


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_to_source_line_writes_the_recorders_journal_line(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    dump_source = oracle_dump_source()
    for index, item in enumerate(native_runs[run_name]):
        line = dumps(dump_source(item))
        assert local_dump_source(item) == dump_source(item)
        assert to_source_line(item) == line, f"item {index}"
        # A line (str, bytes, or the dict it holds) is written back as it is.
        for form in (line, line.encode(), json.loads(line)):
            assert to_source_line(form) == line, f"item {index}"


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except (TypeError, ValueError) as error:
        return error_line(error)


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_native_items_and_their_lines_fold_alike(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    lines = [to_source_line(item) for item in items]
    run_id = items[0].run_id
    cut = len(items) // 2
    # The live loop of models (the reference's API) and the fast path, on native items and on their lines.
    live_native, live_lines, fast_native, fast_lines = (DisplayFold(run_id) for _ in range(4))
    for index, (item, line) in enumerate(zip(items, lines)):
        if index == cut:
            checkpoints = {fold.export_json() for fold in (live_native, live_lines, fast_native, fast_lines)}
            assert len(checkpoints) == 1, f"cut {index}"
        expected = live_fold_line(live_lines, line)
        assert live_fold_line(live_native, item) == expected, f"item {index}"
        assert fold_source_line(fast_native, item) == expected, f"item {index}"
        assert fold_source_line(fast_lines, line) == expected, f"item {index}"
    display = live_lines.export_json()
    for fold in (live_native, fast_native, fast_lines):
        assert fold.export_json() == display
        assert fold.export().model_dump_json() == display
        assert [value.model_dump_json() for value in fold.items.values()] == [
            value.model_dump_json() for value in live_lines.items.values()
        ]
    # A batch of native items is the batch of their lines.
    assert DisplayFold(run_id).fold_lines(items) == DisplayFold(run_id).fold_lines(lines)
    if not any(line.startswith('{"error"') for line in DisplayFold(run_id).fold_lines(lines)):
        assert replay(items) == replay(lines) == display


@pytest.mark.parametrize("run_name", NATIVE_RUN_NAMES)
def test_native_items_and_their_lines_observe_alike(run_name: str, native_runs: dict[str, list[Any]]) -> None:
    items = native_runs[run_name]
    lines = [to_source_line(item) for item in items]
    for cls in (HarnessAguiStreamObserver, HarnessAguiObserver):
        native, textual, native_json, textual_json = cls(), cls(), cls(), cls()
        for index, (item, line) in enumerate(zip(items, lines)):
            assert observe_line(native, item) == observe_line(textual, line), f"{cls.__name__} item {index}"
            assert outcome(lambda: native_json.observe_json(item)) == outcome(
                lambda: textual_json.observe_json(line)
            ), f"{cls.__name__} item {index}"
        assert native.export_json() == textual.export_json() == native_json.export_json()
        assert [event.model_dump_json() for event in native.snapshot()] == [
            event.model_dump_json() for event in textual.snapshot()
        ]
        # Resumption from native history is resumption from its lines.
        resumed = [cls(), cls(), cls()]
        results = [
            outcome(lambda: resumed[0].resume_lines(items)),
            outcome(lambda: resumed[1].resume_lines(lines)),
            outcome(lambda: asyncio.run(resumed[2].resume(history(items)))),
        ]
        # The synchronous resume names the failing item's line in its message; the awaitable one keeps the
        # reference's message and sets `line` only.
        assert results[0] == results[1]
        assert results[2] == (re.sub(r'"line \d+: ', '"', results[0]) if results[0] is not None else None)
        assert resumed[0].export_json() == resumed[1].export_json() == resumed[2].export_json()
        if results[0] is None:
            assert resumed[0].export_json() == native.export_json()


def test_a_processor_of_models_is_given_the_source_as_the_host_passed_it(native_runs: dict[str, list[Any]]) -> None:
    items = native_runs["real-run-0"]
    for form in (lambda item: item, to_source_line, lambda item: to_source_line(item).encode()):
        given: list[tuple[Any, Any]] = []

        def processor(source: Any, event: Any) -> Any:
            given.append((source, event))
            return event

        observer = HarnessAguiStreamObserver(processor=processor)
        fold = DisplayFold(items[0].run_id, processor=processor)
        sources = [form(item) for item in items]
        for source in sources:
            observer.observe(source)
            fold.fold(fold.events(source), source)
        assert {id(source) for source, _ in given} <= {id(source) for source in sources}
        assert len({id(source) for source, _ in given}) == len(sources)
    # The JSON processor is given the wire form, whatever the host passed.
    seen: list[Any] = []

    def json_processor(source: Any, event: Any) -> Any:
        seen.append(source)
        return event

    observer = HarnessAguiStreamObserver(json_processor=json_processor)
    for item in items[:20]:
        observer.observe(item)
    assert seen and all(source == json.loads(to_source_line(items[source["sequence"]])) for source in seen)

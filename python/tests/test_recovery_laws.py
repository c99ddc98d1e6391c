"""The recovery laws at every cut, not only the recorded ones: a checkpoint exported after any line restores
and continues with no gap or overlap, and so does an observer's continuation."""

from __future__ import annotations

from typing import Any

from a13n_stream_rs import DisplayFold, HarnessAguiStreamObserver

from test_corpus import fold_all, observe_line


def test_a_display_checkpoint_at_every_cut_continues_exactly(case: Any) -> None:
    options = case.fold_options()
    fold = DisplayFold(case.run_id, **options)
    for k in range(len(case.lines) + 1):
        if k > 0:
            fold_all(fold, case, case.lines[k - 1 : k])
        restored = DisplayFold.restore(
            fold.export(), retain_content=options["retain_content"], json_processor=options["json_processor"]
        )
        assert fold_all(restored, case, case.lines[k:]) == case.observed[k:], f"cut {k}"
        assert restored.export_json() == case.display, f"cut {k}"


def test_checkpoint_deltas_compose_into_the_whole_display(case: Any) -> None:
    """capture_delta after every line holds exactly the items that changed: the last copy of each is the export."""
    import json

    fold = DisplayFold(case.run_id, **case.fold_options())
    latest: dict[str, Any] = {}
    for line in case.lines:
        fold_all(fold, case, [line])
        # The model and the JSON text are the same delta (each capture consumes it, so capture the model once).
        delta = fold.capture_delta()
        assert fold.capture_delta_json() == delta.model_copy(update={"items": []}).model_dump_json()
        for item in json.loads(delta.model_dump_json())["items"]:
            latest[item["id"]] = item
    whole = json.loads(fold.export_json())["items"]
    assert sorted(latest.values(), key=lambda item: item["ordinal"]) == whole
    assert fold.export_continuation().model_dump_json() == fold.export_continuation_json()
    assert fold.export_json().endswith(',"continuation":' + fold.export_continuation_json() + "}")


def test_an_observer_continuation_at_every_cut_continues_exactly(source_case: Any) -> None:
    case = source_case
    observer = HarnessAguiStreamObserver(json_processor=case.processor)
    for k in range(len(case.lines) + 1):
        if k > 0:
            observe_line(observer, case.lines[k - 1])
        restored = HarnessAguiStreamObserver.restore(observer.export(), json_processor=case.processor)
        assert [observe_line(restored, line) for line in case.lines[k:]] == case.agui[k:], f"cut {k}"

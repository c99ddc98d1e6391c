"""Checkpoints cross between this package and the reference (a13n-stream-protocol 0.21.0) in both directions.

Runs when the reference is installed beside this package (it needs Python 3.13 or later); skips otherwise.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from a13n_stream_rs import DisplayFold, HarnessAguiStreamObserver

from test_corpus import fold_all, observe_line

reference = pytest.importorskip(
    "a13n_stream_protocol", reason="the reference a13n-stream-protocol==0.21.0 is not installed (needs Python >= 3.13)"
)
from a13n_stream_protocol import HarnessAguiStreamObserver as ReferenceObserver  # noqa: E402
from a13n_stream_protocol.display import DisplayFold as ReferenceFold  # noqa: E402
from a13n_stream_protocol.display import DisplaySnapshot  # noqa: E402
from a13n_stream_protocol.observer import ObserverContinuation  # noqa: E402


def test_the_reference_restores_our_checkpoints_byte_for_byte(case: Any) -> None:
    options = case.fold_options()
    for k in case.cuts:
        fold = DisplayFold(case.run_id, **options)
        fold_all(fold, case, case.lines[:k])
        ours = fold.export_json()
        theirs = ReferenceFold.restore(DisplaySnapshot.model_validate_json(ours))
        assert theirs.export().model_dump_json() == ours, f"cut {k}"
        # Our model's own JSON is the same checkpoint.
        assert ReferenceFold.restore(DisplaySnapshot.model_validate_json(fold.export().model_dump_json())).export() == (
            theirs.export()
        ), f"cut {k}"
        if case.agui_only:
            continue
        observer = HarnessAguiStreamObserver(json_processor=case.processor)
        for line in case.lines[:k]:
            observe_line(observer, line)
        continuation = observer.export_json()
        restored = ReferenceObserver.restore(ObserverContinuation.model_validate_json(continuation))
        assert restored.export().model_dump_json() == continuation, f"cut {k}"
        assert observer.export().model_dump_json() == continuation, f"cut {k}"


def reference_fold(events: list[dict[str, Any]], run_id: str, fold: Any = None) -> Any:
    fold = fold if fold is not None else ReferenceFold(run_id)
    for event in events:
        fold.fold([event])
    return fold


def test_display_folds_continue_across_the_two_implementations(agui_case: Any) -> None:
    """AG-UI event cases fold on either side: a cut taken by one continues in the other to the same display.
    (The reference folds Harness source items only as its own objects, so source cases cross as checkpoints.)"""
    case = agui_case
    events = [json.loads(line) for line in case.lines]
    whole = reference_fold(events, case.run_id).export().model_dump_json()
    assert whole == case.display
    for k in case.cuts:
        # The reference's live snapshot object restores here directly, and continues.
        snapshot = reference_fold(events[:k], case.run_id).export()
        ours = DisplayFold.restore(snapshot)
        fold_all(ours, case, case.lines[k:])
        assert ours.export_json() == whole, f"cut {k}"
        # Our checkpoint restores in the reference, and continues.
        fold = DisplayFold(case.run_id)
        fold_all(fold, case, case.lines[:k])
        theirs = ReferenceFold.restore(DisplaySnapshot.model_validate_json(fold.export_json()))
        assert reference_fold(events[k:], case.run_id, theirs).export().model_dump_json() == whole, f"cut {k}"

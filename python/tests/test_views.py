"""`DisplayFold.changed`: assigning it while another thread folds loses no id (the package's own views; no reference
needed)."""

from __future__ import annotations

from typing import Any

import pytest

from a13n_stream_rs import _views
from a13n_stream_rs.display import DisplayFold


def start(message: str, timestamp: int) -> list[dict[str, Any]]:
    return [{"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant", "timestamp": timestamp}]


def test_a_fold_while_changed_is_assigned_keeps_its_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a review: the setter read the ids for the views taken before, let go of the fold, then cleared it,
    so a fold on another thread in between (here, while the views are detached) added ids that reached neither
    the taken view nor the new set."""
    fold = DisplayFold("run")
    fold.fold(start("m1", 1000))
    detach = _views.detach_changed

    def detach_while_another_thread_folds(*args: Any) -> None:
        detach(*args)
        fold.fold(start("m2", 1001))

    monkeypatch.setattr(_views, "detach_changed", detach_while_another_thread_folds)
    to_publish, fold.changed = fold.changed, set()
    monkeypatch.undo()
    assert len(fold.items) == 2
    assert len(to_publish) + len(fold.changed) == 2, (list(to_publish), list(fold.changed))


def test_a_view_taken_before_keeps_its_ids_in_order_and_one_assigned_back_follows_again() -> None:
    fold = DisplayFold("run")
    for index in range(3):
        fold.fold(start(f"m{index}", 1000 + index))
    kept = fold.changed
    order = list(kept)
    fold.changed = set()
    assert list(kept) == order and len(fold.changed) == 0
    fold.fold(start("m3", 1003))
    assert list(kept) == order, "a view taken before the assignment no longer follows the fold"
    fold.changed = kept
    fold.fold(start("m4", 1004))
    # As the reference's fold holds the set assigned: m3's id was in the set it replaced, m4's joins it.
    assert len(kept) == 4 and list(kept)[:3] == order, "assigned back, it follows the fold again"

"""The awaitable ``resume``: history observed one item at a time into staged state, committed at its end.

A failure, or a cancellation while the history is awaited, discards the staged state, so the observer stays
fresh and a retry with the complete history succeeds. While a resumption runs the observer refuses ``observe``,
``export`` and another ``resume``, as the reference does.
"""

from __future__ import annotations

from typing import Any


async def resume(observer: Any, history: Any) -> None:
    """Observe every item of ``history`` (an async or a sync iterable), then commit; on any failure stay fresh."""
    if isinstance(history, (str, bytes)) or not (hasattr(history, "__aiter__") or hasattr(history, "__iter__")):
        raise TypeError("history must be an async iterable of Harness stream events")
    if _observes_its_own_way(observer):
        await _resume_through_observe(observer, history)
        return
    observer._resume_begin()
    committed = False
    try:
        await _each(history, observer._resume_item)
        observer._resume_end(True)
        committed = True
    finally:
        if not committed:
            observer._resume_end(False)


def _observes_its_own_way(observer: Any) -> bool:
    """Whether ``observer``'s class (a host's subclass) overrides ``observe``."""
    from ._core import HarnessAguiObserver, HarnessAguiStreamObserver

    base: Any = HarnessAguiStreamObserver if isinstance(observer, HarnessAguiStreamObserver) else HarnessAguiObserver
    return type(observer).observe is not base.observe


async def _resume_through_observe(observer: Any, history: Any) -> None:
    """As the reference resumes: a new observer of the same class (made with the same processor and
    ``retain_events``) observes the history through its own ``observe``, and this one takes what it observed.
    Meanwhile this observer refuses ``observe``, ``export`` and another ``resume``."""
    observer._resume_begin()
    try:
        staged = type(observer)(**observer._construction())
        await _each(history, staged.observe)
    finally:
        observer._resume_end(False)
    observer._adopt(staged)


async def _each(history: Any, observe: Any) -> None:
    """``observe`` each item of ``history`` (an async or a sync iterable), in order. An error of this package
    raised for an item says which (its 1-based position, ``line``) beside the reference's message."""
    position = 0
    try:
        if hasattr(history, "__aiter__"):
            async for item in history:
                position += 1
                observe(item)
        else:
            for item in history:
                position += 1
                observe(item)
    except Exception as error:
        if getattr(error, "line", None) is None and hasattr(error, "kind"):
            setattr(error, "line", position)
        raise

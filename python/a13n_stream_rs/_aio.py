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
    observer._resume_begin()
    committed = False
    try:
        position = 0
        try:
            if hasattr(history, "__aiter__"):
                async for item in history:
                    position += 1
                    observer._resume_item(item)
            else:
                for item in history:
                    position += 1
                    observer._resume_item(item)
        except Exception as error:
            # The reference's message, with the failing item's 1-based position beside it.
            if getattr(error, "line", None) is None and hasattr(error, "kind"):
                setattr(error, "line", position)
            raise
        observer._resume_end(True)
        committed = True
    finally:
        if not committed:
            observer._resume_end(False)

"""The awaitable half of ``aresume``: collect an async history, then resume atomically in Rust."""

from __future__ import annotations

from typing import Any, AsyncIterable


async def aresume(observer: Any, history: AsyncIterable[Any]) -> None:
    """Gather every line of ``history`` first: if iterating fails or is cancelled, the observer stays fresh."""
    if not hasattr(history, "__aiter__"):
        raise TypeError("history must be an async iterable of source lines")
    lines = [line async for line in history]
    observer.resume(lines)

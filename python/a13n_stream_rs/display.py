"""Compact display items, checkpoints and the display fold, by the reference's ``a13n_stream_protocol.display``
names.

>>> from a13n_stream_rs.display import DisplayFold, DisplaySnapshot
>>> prefix = [
...     {"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000},
...     {"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001},
... ]
>>> suffix = [
...     {"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002},
...     {"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003},
... ]
>>> fold = DisplayFold("run-example")
>>> _ = fold.fold(prefix)
>>> checkpoint_json = fold.export().model_dump_json()
>>> restored = DisplayFold.restore(DisplaySnapshot.model_validate_json(checkpoint_json))
>>> _ = restored.fold(suffix)
>>> item = next(iter(restored.items.values()))
>>> item.content["text"], item.state
('Hello world', 'completed')
"""

from __future__ import annotations

import hashlib

# The other names the reference's module imports, importable from here as from it.
from . import (  # noqa: F401
    AUTHORED_INPUT_EVENT_NAMES,
    AguiEventProcessor,
    CustomEventAssembler,
    HarnessAguiStreamObserver,
    tool_result_content,
)
from ._core import DisplayFold
from ._models import (
    MAX_FIELD_CHARS,
    MAX_OBSERVATION_BYTES,
    ContentRef,
    DisplayContinuation,
    DisplaySnapshot,
    FragmentState,
    Item,
    ItemKind,
    ItemRef,
    ItemState,
    MemorySource,
    Observed,
    ObserverContinuation,
    StreamPosition,
)
from .memory import memory_sources  # noqa: F401


FRAGMENTS: frozenset[str] = frozenset({"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"})
"""The events whose ``delta`` one message or tool call accumulates."""


def item_id(run_id: str, kind: ItemKind, source_id: str) -> str:
    """The stable id of an item: the same across attempts, so a retried tool call updates the item it made."""
    return "itm_" + hashlib.sha256(f"{run_id}\0{kind}\0{source_id}".encode()).hexdigest()[:32]


__all__ = [
    "AUTHORED_INPUT_EVENT_NAMES",
    "MAX_FIELD_CHARS",
    "MAX_OBSERVATION_BYTES",
    "ContentRef",
    "DisplayContinuation",
    "DisplayFold",
    "DisplaySnapshot",
    "FRAGMENTS",
    "FragmentState",
    "Item",
    "ItemKind",
    "ItemRef",
    "ItemState",
    "MemorySource",
    "Observed",
    "ObserverContinuation",
    "StreamPosition",
    "item_id",
]

"""The checkpoint and display models, as Pydantic models whose JSON is the reference's checkpoint JSON.

Every model here has the field names, order, types, defaults and bounds of the wire schema that
``a13n-stream-protocol`` 0.21.0 writes, so ``model_dump_json()`` of a model validated from either package's JSON
writes the same bytes, and a model of this package validates the reference's JSON (and the reverse).

The Rust extension builds instances of these models without validating them where it made the values itself
(``Observed``, ``ItemRef``, ``StreamPosition``); everything read from outside is validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Literal, Optional, Tuple

from pydantic import BaseModel, ConfigDict, Field, JsonValue

ItemKind = Literal["text_message", "reasoning_message", "tool_call", "observation"]
ItemState = Literal["in_progress", "completed", "interrupted", "failed"]

# A display observation larger than this keeps only its name (the reference's bound).
MAX_OBSERVATION_BYTES = 32768
# A message text, tool arguments or tool result keeps this many characters.
MAX_FIELD_CHARS = 262144


def _empty(value: Any) -> bool:
    return not value


class StreamPosition(BaseModel):
    """A position in a run's display stream: the delivery attempt and the event sequence (``str()`` is ``A-S``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    attempt: int = Field(ge=0)
    sequence: int = Field(ge=0)

    def __str__(self) -> str:
        return f"{self.attempt}-{self.sequence}"


class ContentRef(BaseModel):
    """A host-owned value too large for an item's content, loaded through the host's own content API."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    size_bytes: int = Field(ge=0)
    media_type: Literal["text/plain", "application/json"]
    preview: str
    truncated: bool = False


class RecordSource(BaseModel):
    """A memory record delivered to the model."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    sha256: str


class FileSource(BaseModel):
    """A memory file delivered as context."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    sha256: str
    bytes: int = Field(ge=0)
    truncated: bool = False


class MemorySource(BaseModel):
    """Payload-free evidence of one automatic memory delivery in the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["record", "file"]
    memory: str
    memory_id: Optional[str] = None
    status: Literal["recalled", "failed", "timeout", "full", "changes", "unchanged", "omitted", "unavailable"]
    records: Tuple[RecordSource, ...] = ()
    files: Tuple[FileSource, ...] = ()
    cursor: Optional[str] = None
    sources_truncated: bool = False


class Item(BaseModel):
    """One compact display item: a text message, a reasoning message, a tool call or an observation."""

    model_config = ConfigDict(extra="forbid")
    id: str
    ordinal: int = Field(ge=1)
    kind: ItemKind
    state: ItemState
    first_stream_id: str
    last_stream_id: str
    started_at: datetime
    ended_at: Optional[datetime] = None
    content: Dict[str, JsonValue]
    content_refs: Dict[str, ContentRef] = Field(default_factory=dict, exclude_if=_empty)


class ItemRef(BaseModel):
    """The item an event changed, and its state after the event."""

    id: str
    kind: ItemKind
    state: ItemState
    ordinal: Optional[int] = Field(default=None, ge=1)
    response_group: Optional[str] = None
    failure: Optional[Dict[str, JsonValue]] = None
    memory_sources: Optional[Tuple[MemorySource, ...]] = Field(default=None, exclude_if=lambda value: value is None)


class Observed(BaseModel):
    """One AG-UI event (as the JSON the stream carries) at its display sequence, with the item it changed."""

    sequence: int
    event: Dict[str, Any]
    item: Optional[ItemRef]


@dataclass
class _Arguments:
    """A tool-call part's streamed arguments so far and the observation that holds them."""

    stream: JsonValue
    key: str
    at: datetime
    sequence: int
    event: Optional[Dict[str, Any]]
    size: int


@dataclass
class _Assembly:
    """The frames of one fragmented CUSTOM event received so far."""

    count: int
    parts: List[str] = field(default_factory=list)
    size: int = 0


class FragmentState(BaseModel):
    """Incomplete fragmented CUSTOM events (not a journal of completed ones)."""

    model_config = ConfigDict(extra="forbid")
    pending: Dict[str, _Assembly] = Field(default_factory=dict)
    gap: bool = False
    max_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    max_pending: int = Field(default=8, ge=1)


@dataclass
class _PartCursor:
    """An open model response part and the identity it presents under."""

    kind: Literal["text", "reasoning", "tool_call"]
    part_id: str
    tool_name: Optional[str] = None
    emitted_content: bool = False
    emitted_signature: bool = False


@dataclass
class _ObserverState:
    """A run's conversion cursors, its inline children's, and the thread each run is bound to."""

    request_index: int = 0
    parts: Dict[int, _PartCursor] = field(default_factory=dict)
    children: Dict[str, "_ObserverState"] = field(default_factory=dict)
    threads: Dict[str, str] = field(default_factory=dict)


class ObserverContinuation(BaseModel):
    """An observer's conversion state, without the events it emitted."""

    model_config = ConfigDict(extra="forbid")
    thread_id: Optional[str] = None
    run_id: Optional[str] = None
    state: _ObserverState = Field(default_factory=_ObserverState)


class DisplayContinuation(BaseModel):
    """A display fold's parsing state at a cut: what continues the fold with the next event."""

    model_config = ConfigDict(extra="forbid")
    run_id: str
    position: StreamPosition
    next_ordinal: int = Field(ge=1)
    full_content: bool = False
    response_groups: Dict[str, str] = Field(default_factory=dict)
    memory_sources: Dict[str, Tuple[MemorySource, ...]] = Field(default_factory=dict, exclude_if=_empty)
    arguments: Optional[_Arguments] = None
    fragments: FragmentState = Field(default_factory=FragmentState)
    observer: ObserverContinuation = Field(default_factory=ObserverContinuation)


class DisplaySnapshot(BaseModel):
    """A display checkpoint: the items, open ones included, and the continuation that resumes the fold."""

    model_config = ConfigDict(extra="forbid")
    items: List[Item]
    continuation: DisplayContinuation


__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_OBSERVATION_BYTES",
    "ContentRef",
    "DisplayContinuation",
    "DisplaySnapshot",
    "FileSource",
    "FragmentState",
    "Item",
    "ItemKind",
    "ItemRef",
    "ItemState",
    "MemorySource",
    "Observed",
    "ObserverContinuation",
    "RecordSource",
    "StreamPosition",
]

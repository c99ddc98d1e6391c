"""The memory sources a display item names, under the reference's module name (``a13n_stream_protocol.memory``)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _core
from ._models import FileSource, MemorySource, RecordSource


def memory_sources(payload: Dict[str, Any]) -> Optional[Tuple[MemorySource, ...]]:
    """The deliveries a Harness ``memory_recall`` or ``memory_context`` payload reports; ``None`` when it reports no
    evidence or its sources do not validate (missing evidence is never an empty result)."""
    sources = _core.memory_sources(payload)
    if sources is None:
        return None
    return tuple(MemorySource.model_validate(source) for source in sources)


__all__ = ["FileSource", "MemorySource", "RecordSource", "memory_sources"]

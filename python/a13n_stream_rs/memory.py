"""The memory sources a display item names, under the reference's module name (``a13n_stream_protocol.memory``)."""

from __future__ import annotations

from ._models import MemorySource

__all__ = ["MemorySource"]

"""The observers and their errors, under the reference's module name (``a13n_stream_protocol.observer``)."""

from __future__ import annotations

from . import (
    AguiEventProcessor,
    AguiObservationError,
    HarnessAguiObserver,
    HarnessAguiStreamObserver,
    fragment_custom_event,
    tool_result_content,
)
from ._models import ObserverContinuation
from .content import public_tool_value

__all__ = [
    "AguiEventProcessor",
    "AguiObservationError",
    "HarnessAguiObserver",
    "HarnessAguiStreamObserver",
    "ObserverContinuation",
    "fragment_custom_event",
    "public_tool_value",
    "tool_result_content",
]

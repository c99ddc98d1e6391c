"""Fragmenting and reassembling large ``CUSTOM`` events, under the reference's module name
(``a13n_stream_protocol.fragments``)."""

from __future__ import annotations

from . import CustomEventAssembler, fragment_custom_event
from ._core import FRAGMENT_EVENT_NAME
from ._models import FragmentState

__all__ = ["FRAGMENT_EVENT_NAME", "CustomEventAssembler", "FragmentState", "fragment_custom_event"]

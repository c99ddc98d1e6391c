"""The Harness's input projection for protocol consumers, under the reference's module name
(``a13n_stream_protocol.messages``): the names of authored input events here, and the Harness's own
``ContentMetadata`` and ``project_input_content`` re-exported when a13n-harness is installed."""

from __future__ import annotations

from typing import Any

from . import AUTHORED_INPUT_EVENT_NAMES


def __getattr__(name: str) -> Any:
    # The Harness's own names, re-exported as the reference does, only when a13n-harness is installed.
    if name in ("ContentMetadata", "project_input_content"):
        from a13n_harness import content

        return getattr(content, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AUTHORED_INPUT_EVENT_NAMES"]

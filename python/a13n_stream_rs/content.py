"""Tool results as public content, under the reference's module name (``a13n_stream_protocol.content``)."""

from __future__ import annotations

from typing import Any

from . import tool_result_content


def public_tool_value(value: Any) -> Any:
    """A tool's returned value as failure and retry observations show it: bytes by their size, native content as
    its payload-free projection (or omitted when it is not displayed), a record holding media omitted and any other
    record as its dump, dicts, lists and tuples walked (a tuple as a list), anything else as it is."""
    from ._native import public_value

    return public_value(value)


__all__ = ["public_tool_value", "tool_result_content"]

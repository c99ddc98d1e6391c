"""Tool results as public content, under the reference's module name (``a13n_stream_protocol.content``)."""

from __future__ import annotations

from . import tool_result_content

__all__ = ["tool_result_content"]

"""The exact, fast Rust core of the Agent Stream Protocol, for Python hosts: a drop-in for the reference.

The names, types and errors are those of the reference package ``a13n-stream-protocol`` 0.21.0, so a host
switches by changing its imports::

    from a13n_stream_rs import HarnessAguiStreamObserver        # was: from a13n_stream_protocol import ...
    from a13n_stream_rs.display import DisplayFold, DisplaySnapshot

Source items are the Harness's native objects (``HarnessEvent``, ``HarnessRunResultEvent``), read in Rust, or
their journal line (``str``, ``bytes`` or ``dict``; :func:`to_source_line` writes one). Observers return
``ag_ui`` event models; the display fold returns ``Observed`` models and exports ``DisplaySnapshot`` models
whose JSON is the reference's checkpoint JSON byte for byte, so checkpoints move between the two packages.
Beside them, JSON fast paths: ``DisplayFold.fold_line`` / ``fold_lines``, ``observe_json``, :func:`replay`.

>>> from a13n_stream_rs.display import DisplayFold
>>> line = ('{"thread_id":"t","run_id":"r","sequence":0,"occurred_at":"2026-11-29T12:00:00+00:00",'
...         '"event":{"schema_version":"1","kind":"lifecycle","payload":{"type":"run_started"}}}')
>>> fold = DisplayFold("r")
>>> [entry.event["type"] for entry in fold.fold(fold.events(line), line)]
['RUN_STARTED']
>>> str(fold.position)
'0-1'
"""

from __future__ import annotations

from typing import Any, Callable, FrozenSet, List, Optional, Union

from ag_ui.core import ContentPart, Event
from pydantic import TypeAdapter

from ._core import (
    MAX_SOURCE_LINE_BYTES,
    AguiObservationError,
    CustomEventAssembler,
    DisplayFold,
    HarnessAguiObserver,
    HarnessAguiStreamObserver,
    InputError,
    ValidationError,
    __version__,
    fragment_custom_event,
    replay,
    to_source_line,
)
from ._core import tool_result_content as _tool_result_content


class SourceLineError(InputError, TypeError):
    """A journal line (``str``, ``bytes`` or ``dict``) given where a native source item goes, that is not one.

    Both an :class:`InputError` (it names the field, with ``kind``, ``line`` and ``path``) and a ``TypeError``, which
    the reference raises for any value that is not a native item: a host's ``except TypeError`` still catches it."""


_CONTENT_PARTS: TypeAdapter[List[ContentPart]] = TypeAdapter(List[ContentPart])


def _native_content() -> tuple[type, ...]:
    """Pydantic AI's and the Harness's content types (the reference's native content), those installed."""
    kinds: list[type] = []
    try:
        from pydantic_ai import messages

        names = ("BinaryContent", "ImageUrl", "AudioUrl", "VideoUrl", "DocumentUrl", "UploadedFile", "TextContent")
        kinds += [getattr(messages, name) for name in names if hasattr(messages, name)]
    except ImportError:
        pass
    try:
        from a13n_harness.content import ContentItem

        kinds.append(ContentItem)
    except (ImportError, TypeError):
        pass
    return tuple(kind for kind in kinds if isinstance(kind, type))


def tool_result_content(value: Any) -> Union[str, List[ContentPart]]:
    """A tool's result as its public content, as the reference projects it: ordinary JSON as text, native content
    (``ImageUrl``, ``BinaryContent``, ...) as ordered ``ag_ui`` parts, bytes described and never embedded."""
    if _native_content():
        # Read as the reference projects it: records, bytes and values without a JSON form described first.
        from ._native import tool_value

        value = tool_value(value)
    projected = _tool_result_content(value)
    return projected if isinstance(projected, str) else _CONTENT_PARTS.validate_python(projected)


AguiEventProcessor = Callable[[Any, Event], Optional[Event]]
"""``processor(source, event)``: the source item as the host gave it and an ``ag_ui`` event model; returns the
event, a replacement of the same type with only mutable fields changed, or ``None`` to drop it."""

AUTHORED_INPUT_EVENT_NAMES: FrozenSet[str] = frozenset({"a13n.input.user", "a13n.input.steering"})
"""The CUSTOM event names of input a person authored (shown as user messages)."""


def __getattr__(name: str) -> Any:
    # The Harness's own type, re-exported as the reference does, only when a13n-harness is installed.
    if name == "ContentMetadata":
        from a13n_harness.content import ContentMetadata

        return ContentMetadata
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The reference's submodules that its package imports, so that `a13n_stream_rs.observer` (say) is there after
# `import a13n_stream_rs`, as `a13n_stream_protocol.observer` is. Last: they import the names above.
from . import content, fragments, messages, observer  # noqa: E402

__all__ = [
    "AUTHORED_INPUT_EVENT_NAMES",
    "MAX_SOURCE_LINE_BYTES",
    "AguiEventProcessor",
    "AguiObservationError",
    "CustomEventAssembler",
    "DisplayFold",
    "HarnessAguiObserver",
    "HarnessAguiStreamObserver",
    "InputError",
    "SourceLineError",
    "ValidationError",
    "__version__",
    "fragment_custom_event",
    "replay",
    "to_source_line",
    "tool_result_content",
]

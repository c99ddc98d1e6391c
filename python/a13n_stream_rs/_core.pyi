"""Type stubs of the Rust extension; see the package documentation for semantics."""

from os import PathLike
from typing import Any, AsyncIterable, Callable, Coroutine, Iterable, Optional, Union, overload

from a13n_harness.events import HarnessStreamEvent
from ag_ui.core import CustomEvent, Event
from typing_extensions import Self, disjoint_base

from ._models import (
    DisplayContinuation,
    DisplaySnapshot,
    FragmentState,
    Item,
    Observed,
    ObserverContinuation,
    StreamPosition,
)
from ._views import Changed, Items

_Line = Union[str, bytes, dict[str, Any]]
"""A source item's journal line: its JSON as str or bytes (UTF-8), or the equivalent dict."""

_Source = Union[HarnessStreamEvent[Any], _Line]
"""A source item: a native ``HarnessEvent`` / ``HarnessRunResultEvent``, or its journal line (``_Line``). Where
``a13n_harness`` is not installed, a type checker reads the native half as ``Any``."""

_Json = Union[str, bytes, Any]
"""A model with ``model_dump_json()`` (this package's or the reference's), or its JSON text."""

_Processor = Callable[[Any, Event], Optional[Event]]
"""processor(source, event): the source item as given and an ``ag_ui`` event model; the event, a replacement or None.
The source is ``Any`` so that a processor typed for the reference's native items fits."""

_JsonProcessor = Callable[[dict[str, Any], dict[str, Any]], Optional[dict[str, Any]]]
"""json_processor(source, event): the same over JSON dicts."""

__all__ = [
    "FRAGMENT_EVENT_NAME",
    "MAX_SOURCE_LINE_BYTES",
    "AguiObservationError",
    "CustomEventAssembler",
    "DisplayFold",
    "HarnessAguiObserver",
    "HarnessAguiStreamObserver",
    "InputError",
    "ValidationError",
    "__version__",
    "fragment_custom_event",
    "memory_sources",
    "replay",
    "to_source_line",
    "tool_result_content",
]

__version__: str
MAX_SOURCE_LINE_BYTES: int
FRAGMENT_EVENT_NAME: str

class AguiObservationError(ValueError):
    """A public Harness item the protocol cannot observe without changing its meaning; nothing was committed."""

    kind: str
    line: Optional[int]
    path: Optional[str]

class ValidationError(ValueError):
    """A first-party payload that fails the reference's Pydantic model; nothing was committed."""

    kind: str
    line: Optional[int]
    path: Optional[str]

class InputError(ValueError):
    """Malformed input, naming the field; nothing was committed."""

    kind: str
    line: Optional[int]
    path: Optional[str]

@disjoint_base
class DisplayFold:
    def __new__(
        cls,
        run_id: str,
        items: Optional[Iterable[Union[Item, str, bytes]]] = None,
        *,
        attempt: int = 0,
        first: int = 1,
        full_content: bool = False,
        retain_content: bool = False,
        processor: Optional[_Processor] = None,
        continuation: Optional[Union[DisplayContinuation, _Json]] = None,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> Self: ...
    def __init__(
        self,
        run_id: str,
        items: Optional[Iterable[Union[Item, str, bytes]]] = None,
        *,
        attempt: int = 0,
        first: int = 1,
        full_content: bool = False,
        retain_content: bool = False,
        processor: Optional[_Processor] = None,
        continuation: Optional[Union[DisplayContinuation, _Json]] = None,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> None: ...
    @staticmethod
    def restore(
        snapshot: Union[DisplaySnapshot, _Json],
        *,
        processor: Optional[_Processor] = None,
        retain_content: bool = False,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> DisplayFold: ...
    def events(self, source: _Source) -> list[dict[str, Any]]: ...
    def fold(self, events: Iterable[dict[str, Any]], source: Optional[_Source] = None) -> list[Observed]: ...
    def fold_line(self, line: _Source) -> str: ...
    def fold_lines(self, lines: Iterable[_Source]) -> list[str]: ...
    def export(self) -> DisplaySnapshot: ...
    def export_json(self) -> str: ...
    def capture_delta(self) -> DisplaySnapshot: ...
    def capture_delta_json(self) -> str: ...
    def export_continuation(self) -> DisplayContinuation: ...
    def export_continuation_json(self) -> str: ...
    @property
    def position(self) -> StreamPosition: ...
    @property
    def items(self) -> Items: ...
    @property
    def changed(self) -> Changed: ...
    @changed.setter
    def changed(self, ids: Iterable[str]) -> None: ...
    @property
    def next(self) -> int: ...
    @property
    def response_groups(self) -> dict[str, str]: ...
    @property
    def run_id(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def sequence(self) -> int: ...
    @property
    def full_content(self) -> bool: ...
    @full_content.setter
    def full_content(self, full_content: bool) -> None: ...
    @property
    def retain_content(self) -> bool: ...
    @retain_content.setter
    def retain_content(self, retain_content: bool) -> None: ...
    @property
    def item_count(self) -> int: ...
    def _item_ids(self) -> list[str]: ...
    def _item(self, id: str) -> Optional[Item]: ...
    def _retire(self, id: str) -> bool: ...
    def _changed_ids(self) -> list[str]: ...
    def _set_changed(self, id: str, changed: bool) -> bool: ...
    def _clear_changed(self) -> None: ...

class _Observer:
    def observe(self, item: _Source) -> tuple[Event, ...]: ...
    def observe_json(self, item: _Source) -> list[str]: ...
    def resume(self, history: Union[AsyncIterable[_Source], Iterable[_Source]]) -> Coroutine[Any, Any, None]: ...
    def resume_lines(self, lines: Iterable[_Source]) -> None: ...
    def _resume_begin(self) -> None: ...
    def _resume_item(self, item: _Source) -> None: ...
    def _resume_end(self, commit: bool) -> None: ...
    def export(self) -> ObserverContinuation: ...
    def export_json(self) -> str: ...
    def snapshot(self, *, start: int = 0, stop: Optional[int] = None) -> tuple[Event, ...]: ...
    @property
    def event_count(self) -> int: ...
    @property
    def thread_id(self) -> Optional[str]: ...
    @property
    def run_id(self) -> Optional[str]: ...

@disjoint_base
class HarnessAguiObserver(_Observer):
    def __new__(
        cls,
        *,
        processor: Optional[_Processor] = None,
        retain_events: bool = True,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> Self: ...
    def __init__(
        self,
        *,
        processor: Optional[_Processor] = None,
        retain_events: bool = True,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> None: ...
    @classmethod
    def restore(
        cls,
        continuation: Union[ObserverContinuation, _Json],
        *,
        processor: Optional[_Processor] = None,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> Self: ...

class HarnessAguiStreamObserver(HarnessAguiObserver):
    def __new__(
        cls,
        *,
        processor: Optional[_Processor] = None,
        retain_events: bool = True,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> Self: ...
    def __init__(
        self,
        *,
        processor: Optional[_Processor] = None,
        retain_events: bool = True,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> None: ...
    @classmethod
    def restore(
        cls,
        continuation: Union[ObserverContinuation, _Json],
        *,
        processor: Optional[_Processor] = None,
        json_processor: Optional[_JsonProcessor] = None,
    ) -> Self: ...

@disjoint_base
class CustomEventAssembler:
    def __new__(cls, *, max_bytes: int = 67108864, max_pending: int = 8) -> Self: ...
    def __init__(self, *, max_bytes: int = 67108864, max_pending: int = 8) -> None: ...
    def accept(self, payload: dict[str, Any]) -> Optional[dict[str, Any]]: ...
    @property
    def gap(self) -> bool: ...
    @gap.setter
    def gap(self, gap: bool) -> None: ...
    @property
    def max_bytes(self) -> int: ...
    @max_bytes.setter
    def max_bytes(self, max_bytes: int) -> None: ...
    @property
    def max_pending(self) -> int: ...
    @max_pending.setter
    def max_pending(self, max_pending: int) -> None: ...
    def export(self) -> FragmentState: ...
    def export_json(self) -> str: ...
    @classmethod
    def restore(cls, state: Union[FragmentState, _Json]) -> CustomEventAssembler: ...

def replay(
    lines: Union[Iterable[_Source], str, PathLike[str]],
    run_id: Optional[str] = None,
    *,
    full_content: bool = False,
    retain_content: bool = False,
) -> str: ...
def to_source_line(item: _Source) -> str: ...
@overload
def fragment_custom_event(event: CustomEvent, *, identity: str) -> list[CustomEvent]: ...
@overload
def fragment_custom_event(event: dict[str, Any], *, identity: str) -> list[dict[str, Any]]: ...
def tool_result_content(value: Any) -> Union[str, list[dict[str, Any]]]: ...
def memory_sources(payload: dict[str, Any]) -> Optional[list[dict[str, Any]]]: ...

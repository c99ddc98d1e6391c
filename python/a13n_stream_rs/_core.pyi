"""Type stubs of the Rust extension; see the package documentation for semantics."""

from os import PathLike
from typing import Any, AsyncIterable, Callable, Iterable, Optional, Union, final

from typing_extensions import Self

_Line = Union[str, bytes, dict[str, Any]]
"""One Harness source item: its JSON line as str or bytes (UTF-8), or the equivalent dict."""

_Json = Union[str, bytes, Any]
"""JSON text, or any object with model_dump_json() (a reference model)."""

_Processor = Callable[[dict[str, Any], dict[str, Any]], Optional[dict[str, Any]]]
"""processor(source, event) -> the event, a replacement, or None to drop it."""

__all__ = [
    "MAX_SOURCE_LINE_BYTES",
    "AguiObservationError",
    "CustomEventAssembler",
    "DisplayFold",
    "HarnessAguiObserver",
    "HarnessAguiStreamObserver",
    "InputError",
    "ValidationError",
    "fragment_custom_event",
    "replay",
    "tool_result_content",
]

MAX_SOURCE_LINE_BYTES: int

class AguiObservationError(ValueError):
    """Well-formed input that the protocol rejects; nothing was committed."""

class ValidationError(ValueError):
    """A first-party payload that fails the reference's Pydantic model; nothing was committed."""

class InputError(ValueError):
    """Malformed input, naming the field; nothing was committed."""

@final
class DisplayFold:
    def __new__(
        cls,
        run_id: str,
        *,
        full_content: bool = False,
        retain_content: bool = False,
        processor: Optional[_Processor] = None,
    ) -> Self: ...
    @staticmethod
    def restore(
        checkpoint: _Json, *, retain_content: bool = False, processor: Optional[_Processor] = None
    ) -> DisplayFold: ...
    def fold_line(self, line: _Line) -> str: ...
    def fold_lines(self, lines: Iterable[_Line]) -> list[str]: ...
    def fold(self, events: Iterable[dict[str, Any]], source: Optional[_Line] = None) -> list[dict[str, Any]]: ...
    def events(self, source: _Line) -> list[dict[str, Any]]: ...
    def export(self) -> str: ...
    def capture_delta(self) -> str: ...
    def export_continuation(self) -> str: ...
    @property
    def position(self) -> dict[str, int]: ...
    @property
    def run_id(self) -> str: ...
    @property
    def item_count(self) -> int: ...

class _Observer:
    def observe(self, line: _Line) -> list[dict[str, Any]]: ...
    def observe_json(self, line: _Line) -> list[str]: ...
    def resume(self, lines: Iterable[_Line]) -> None: ...
    async def aresume(self, history: AsyncIterable[_Line]) -> None: ...
    def export(self) -> str: ...
    def snapshot(self, *, start: int = 0, stop: Optional[int] = None) -> list[dict[str, Any]]: ...
    @property
    def event_count(self) -> int: ...
    @property
    def thread_id(self) -> Optional[str]: ...
    @property
    def run_id(self) -> Optional[str]: ...

@final
class HarnessAguiStreamObserver(_Observer):
    def __new__(cls, *, processor: Optional[_Processor] = None, retain_events: bool = True) -> Self: ...
    @classmethod
    def restore(cls, continuation: _Json, *, processor: Optional[_Processor] = None) -> Self: ...

@final
class HarnessAguiObserver(_Observer):
    def __new__(cls, *, processor: Optional[_Processor] = None, retain_events: bool = True) -> Self: ...
    @classmethod
    def restore(cls, continuation: _Json, *, processor: Optional[_Processor] = None) -> Self: ...

@final
class CustomEventAssembler:
    def __new__(cls, *, max_bytes: int = 67108864, max_pending: int = 8) -> Self: ...
    def accept(self, payload: dict[str, Any]) -> Optional[dict[str, Any]]: ...
    @property
    def gap(self) -> bool: ...
    def export(self) -> str: ...
    @classmethod
    def restore(cls, state: _Json) -> CustomEventAssembler: ...

def replay(
    lines: Union[Iterable[_Line], str, PathLike[str]],
    run_id: Optional[str] = None,
    *,
    full_content: bool = False,
    retain_content: bool = False,
) -> str: ...
def fragment_custom_event(event: dict[str, Any], *, identity: str) -> list[dict[str, Any]]: ...
def tool_result_content(value: Any) -> Union[str, list[dict[str, Any]]]: ...

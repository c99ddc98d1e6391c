"""The ``ag_ui`` event models the extension builds, described once per event type.

The extension converts in Rust and hands out ``ag_ui.core`` event models, as the reference does. Building a
model by validating its JSON costs more than the conversion itself, so for each event type the extension asks
:func:`templates` once for the model class and its fields (name, JSON key, default, whether the field holds
nested models) and fills an instance's fields directly: the instance equals the one validation makes. An event
with a nested model value (a run's outcome and usage, tool-result parts) or a key the model does not declare is
validated instead (:func:`validate`).
"""

from __future__ import annotations

import typing
from typing import Any, Dict, List, Tuple

from ag_ui.core import Event
from ag_ui.core import events as _events
from ag_ui.core.events import BaseEvent, EventType
from pydantic import BaseModel, TypeAdapter

# (field name, JSON key, default, holds nested models)
Field = Tuple[str, str, Any, bool]

_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)


def _holds_models(annotation: Any) -> bool:
    if isinstance(annotation, type):
        return issubclass(annotation, BaseModel)
    return any(_holds_models(argument) for argument in typing.get_args(annotation))


def _fields(cls: type) -> List[Field]:
    fields: List[Field] = []
    for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
        key = info.serialization_alias or info.alias or name
        default = info.get_default(call_default_factory=True)
        fields.append((name, key, default, _holds_models(info.annotation)))
    return fields


def templates() -> Dict[str, Tuple[type, Any, List[Field]]]:
    """For each AG-UI event type name: its model class, its ``EventType`` member and its fields in order."""
    out: Dict[str, Tuple[type, Any, List[Field]]] = {}
    for value in vars(_events).values():
        if not (isinstance(value, type) and issubclass(value, BaseEvent) and value is not BaseEvent):
            continue
        kind = value.model_fields["type"].default
        if isinstance(kind, EventType) and kind.value not in out:
            out[kind.value] = (value, kind, _fields(value))
    return out


def validate(event: Dict[str, Any]) -> Any:
    """An event model by validation: the path for events the templates do not describe."""
    return _ADAPTER.validate_python(event)


def base_event() -> type:
    return BaseEvent

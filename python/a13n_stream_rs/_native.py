"""How the extension reads the Harness's native objects: one plan per Python type, made once.

The extension walks a native source item (``HarnessEvent`` or ``HarnessRunResultEvent`` and the Pydantic AI
events inside) in Rust, field by field, and writes what Pydantic's JSON-mode, by-alias dump writes: the journal
wire form (``to_source_line``). For each type it meets it asks :func:`plan` once how to read it:

- a Pydantic model: its fields in declaration order, each with its serialization key, then any extra fields;
- a dataclass: its fields in declaration order;
- ``None``: a type whose dump Pydantic customises (serializers, computed fields, excluded or aliased dataclass
  fields, non-default JSON settings). The extension then asks :func:`dump` for the whole event, which is
  Pydantic's own dump, so the result is exact either way.

``a13n-harness`` is imported only when a native item is first met, so the package imports without it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from pydantic import BaseModel, TypeAdapter

# A plan: (is_model, ((attribute, key, serializer), ...), has_extra). Attribute and key differ only by a
# serialization alias; a serializer is ``(function, skip_none)``, a Pydantic ``PlainSerializer`` the field's value
# goes through before it is written (``skip_none``: not for ``None``), or ``None``.
Serializer = Optional[Tuple[Any, bool]]
Plan = Tuple[bool, Tuple[Tuple[str, str, Serializer], ...], bool]

_DEFAULT_SER = {"ser_json_timedelta": "iso8601", "ser_json_bytes": "utf8", "ser_json_inf_nan": "null"}
_PLAIN_WHEN = {"always": False, "json": False, "unless-none": True, "json-unless-none": True}


class _Custom(Exception):
    """Field metadata that only Pydantic's own dump applies exactly."""


def _serializer(metadata: List[Any]) -> Serializer:
    """The plain serializer field metadata names; raises ``_Custom`` for anything else that changes the dump."""
    found: Serializer = None
    for entry in metadata:
        name = type(entry).__name__
        if name == "PlainSerializer" and entry.when_used in _PLAIN_WHEN and found is None:
            found = (entry.func, _PLAIN_WHEN[entry.when_used])
        elif name in ("PlainSerializer", "WrapSerializer", "SerializeAsAny"):
            raise _Custom
        elif name == "FieldInfo" and (entry.exclude or entry.serialization_alias or entry.alias):
            raise _Custom
    return found


def _model_plan(cls: type) -> Optional[Plan]:
    decorators = cls.__pydantic_decorators__  # type: ignore[attr-defined]
    if decorators.field_serializers or decorators.model_serializers or decorators.computed_fields:
        return None
    config = cls.model_config  # type: ignore[attr-defined]
    if any(config.get(key, default) != default for key, default in _DEFAULT_SER.items()):
        return None
    if config.get("serialize_by_alias") is False or config.get("use_enum_values"):
        return None
    fields: List[Tuple[str, str, Serializer]] = []
    for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
        if getattr(info, "exclude_if", None) is not None:
            return None
        serializer = _serializer(list(info.metadata))
        if info.exclude:
            continue
        fields.append((name, info.serialization_alias or info.alias or name, serializer))
    return (True, tuple(fields), config.get("extra") == "allow")


def _dataclass_plan(cls: type) -> Optional[Plan]:
    if hasattr(cls, "__pydantic_fields__") or hasattr(cls, "__get_pydantic_core_schema__"):
        return None
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an unresolvable annotation: let Pydantic decide
        return None
    fields: List[Tuple[str, str, Serializer]] = []
    for entry in dataclasses.fields(cls):
        hint: Any = hints.get(entry.name)
        annotated = typing.get_origin(hint) is typing.Annotated
        fields.append((entry.name, entry.name, _serializer(list(hint.__metadata__)) if annotated else None))
    return (False, tuple(fields), False)


def plan(cls: type) -> Optional[Plan]:
    """How to read instances of ``cls`` field by field, or ``None`` when only Pydantic's dump is exact."""
    if cls is _unknown_capability():
        return None
    try:
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            return _model_plan(cls)
        if dataclasses.is_dataclass(cls):
            return _dataclass_plan(cls)
    except Exception:  # _Custom, or a class Pydantic itself would describe otherwise
        return None
    return None


@lru_cache(maxsize=256)
def _adapter(cls: Any) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


def _unknown_capability() -> Optional[type]:
    """Pydantic AI's ``UnknownCapabilityEvent``: a capability event of a kind this process has no class for (looked up
    in the imported module each time, which costs a dictionary lookup)."""
    try:
        from pydantic_ai.messages import UnknownCapabilityEvent
    except ImportError:  # no Pydantic AI: no such event either
        return None
    return UnknownCapabilityEvent


def dump(value: Any) -> Any:
    """Pydantic's JSON-mode, by-alias dump of one native event (the exact path for types without a plan)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    kind: Any = type(value)
    if kind is _unknown_capability():
        # Dumped as the event union dumps it, which puts what the event gathered in ``data`` back at the top
        # (the class's own dump nests it), as the reference writes the event it carries.
        from pydantic_ai.messages import AgentStreamEvent

        kind = AgentStreamEvent
    return _adapter(kind).dump_python(value, mode="json", by_alias=True, warnings="error")


def dump_result(result: Any) -> Dict[str, Any]:
    """The journal form of a Run's terminal result (status, output, usage, failure, deferred calls)."""
    out: Dict[str, Any] = {"status": result.status}
    if result.status == "completed":
        try:
            out["output"] = result.output_json()
        except (TypeError, ValueError):
            out["output"] = None
            out["output_omitted"] = True
    usage = result.usage
    out["usage"] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "details": dict(usage.details),
    }
    if result.failure is not None:
        out["failure"] = result.failure.model_dump(mode="json", by_alias=True)
    if result.deferred is not None:
        out["deferred"] = dump(result.deferred)
    return out


@lru_cache(maxsize=1)
def _native_content() -> Tuple[type, ...]:
    """The Harness's and Pydantic AI's native content types (media, files, uploads, text content)."""
    from a13n_harness.content import ContentItem
    from pydantic_ai import messages

    names = ("BinaryContent", "ImageUrl", "AudioUrl", "VideoUrl", "DocumentUrl", "UploadedFile", "TextContent")
    return (ContentItem, *(getattr(messages, name) for name in names if hasattr(messages, name)))


def _holds_native(value: Any, native: Tuple[type, ...], seen: set[int]) -> bool:
    """Whether ``value`` holds bytes or native content anywhere in its fields, items or values."""
    if isinstance(value, (bytes, bytearray, *native)):
        return True
    if id(value) in seen:
        return False
    seen.add(id(value))
    if isinstance(value, BaseModel):
        children: Any = [getattr(value, name) for name in type(value).model_fields]
        children.extend((value.model_extra or {}).values())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        children = [getattr(value, entry.name) for entry in dataclasses.fields(value)]
    elif isinstance(value, dict):
        children = value.values()
    elif isinstance(value, (list, tuple)):
        children = value
    else:
        return False
    return any(_holds_native(child, native, seen) for child in children)


def _described(value: Any, native: Tuple[type, ...], strict: bool = False) -> Any:
    """A tool's returned value as the reference presents tool results, where its JSON would show it otherwise: bytes
    as their size, a model or dataclass holding bytes or native content as omitted (its own serializer may flatten
    the media into its JSON), any other model or dataclass as its type's JSON-mode dump by field name. Native
    content itself is kept: its JSON is projected as the reference projects it. ``value`` itself when nothing
    changes. (The extension calls this only for a value that holds something other than plain JSON.) ``strict``:
    a record whose dump holds NaN or an infinity raises ``ValueError``, as the reference's projection of it does."""
    if isinstance(value, (bytes, bytearray)):
        return {"payload_omitted": True, "size_bytes": len(value)}
    if isinstance(value, native):
        return value
    if isinstance(value, dict):
        items = {key: _described(item, native, strict) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, (list, tuple)):
        described = [_described(item, native, strict) for item in value]
        return value if all(new is old for new, old in zip(described, value)) else described
    model = isinstance(value, BaseModel) or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    if not model:
        return value
    if _holds_native(value, native, set()):
        return {"payload_omitted": True}
    # As the reference projects a record: its own type's JSON-mode dump, by field name (not alias).
    kind: Any = type(value)
    dumped = _adapter(kind).dump_python(value, mode="json", warnings="error")
    if strict and not _finite(dumped):
        raise ValueError(_NOT_FINITE)
    return dumped


# The metadata key under which a lowered tool result marks its execution value (the core's `content.rs` reads it
# from the journal line).
_TOOL_CONTENT_KEY = "a13n.tool-content"
# What the reference raises for a presented tool value holding NaN or an infinity.
_NOT_FINITE = "JSON numbers must be finite"
# How deep the finiteness check looks: as deep as the extension reads a native value.
_MAX_DEPTH = 128


def _finite(value: Any, depth: int = 0) -> bool:
    """Whether no float reachable through dicts, lists and tuples is NaN or an infinity (a record's floats are
    dumped as JSON, where they become ``null``, so a record is not looked into)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if depth > _MAX_DEPTH:
        return True
    if isinstance(value, dict):
        return all(_finite(item, depth + 1) for item in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(item, depth + 1) for item in value)
    return True


def _lowered(part: Any) -> bool:
    """Whether a tool return is a lowered result: its metadata marks which of its contents is the execution value."""
    metadata = getattr(part, "metadata", None)
    return isinstance(metadata, dict) and _TOOL_CONTENT_KEY in metadata


def _execution_value(part: Any) -> Any:
    """The value a tool result presents: the marked execution value of a lowered result, or its content (a marker
    that points at nothing reads as ``None`` here; the conversion refuses it)."""
    if not _lowered(part):
        return part.content
    try:
        return part.content[part.metadata[_TOOL_CONTENT_KEY]["result_index"]]
    except (LookupError, TypeError):
        return None


def _success(part: Any) -> bool:
    """Whether ``part`` is a tool return the observer presents (a successful one)."""
    return getattr(part, "part_kind", None) == "tool-return" and getattr(part, "outcome", "success") == "success"


def unpresented_for_fold(event: Any) -> Any:
    """The tool result event the display fold reads for a result the observer does not present (retried, failed,
    a retry prompt), whose value the fold presents as the failed call's text as the reference's does from the
    native value (``presented``); ``None`` when that is the event as described for the observer. Raises
    ``ValueError`` as the reference's fold does for such a value holding NaN or an infinity."""
    part: Any = getattr(event, "part", None)
    if _success(part):
        return None
    native = _native_content()
    returned = getattr(part, "part_kind", None) == "tool-return"
    value = _execution_value(part) if returned else part.content
    described = _described(value, native)
    if not _finite(described):
        raise ValueError(_NOT_FINITE)
    shown = presented(value, described, native)
    if shown is described:
        return None
    content = _with_execution_value(part, _described(part.content, native), shown) if returned and _lowered(part) else shown
    return dataclasses.replace(event, part=dataclasses.replace(part, content=content))


def tool_result_event(event: Any) -> Any:
    """A tool result event as the conversion reads it: a returned value's bytes and media-bearing records
    described (never embedded, and binary bytes never decoded as text), the rest as it is; ``event`` itself when
    nothing changes. Raises ``ValueError`` where the reference's ``observe`` does: a record in the presented value
    whose dump holds NaN or an infinity (whatever the outcome), or any such float of a successful return's value."""
    part: Any = getattr(event, "part", None)
    if getattr(part, "part_kind", None) != "tool-return" or not hasattr(part, "__dataclass_fields__"):
        return event
    native = _native_content()
    lowered = _lowered(part)
    # Described once: strictly when the whole content is the presented value, else the presented part apart.
    content = _described(part.content, native, strict=not lowered)
    public = _described(_execution_value(part), native, strict=True) if lowered else content
    if _success(part):
        if not _finite(public):
            raise ValueError(_NOT_FINITE)
        content = _as_presented(part, content, public, native)
    if content is part.content:
        return event
    return dataclasses.replace(event, part=dataclasses.replace(part, content=content))


def _as_presented(part: Any, content: Any, public: Any, native: Tuple[type, ...]) -> Any:
    """A successful return's described ``content`` with its presented value (``public``, described from the part's
    execution value) in the form the core presents as the reference does (``presented``)."""
    if not _lowered(part):
        return presented(part.content, content, native)
    value = _execution_value(part)
    shown = presented(value, public, native)
    return content if shown is public else _with_execution_value(part, content, shown)


def _with_execution_value(part: Any, content: Any, shown: Any) -> Any:
    """A lowered result's described ``content`` with ``shown`` in place of the value its marker points at, where the
    core reads it: a list's item (a negative index from the end), or a dict's entry under its key; ``content``
    itself when the marker points at neither (the core reads a string's code point itself, and refuses a marker that
    points at nothing)."""
    marker = part.metadata[_TOOL_CONTENT_KEY]
    index = marker.get("result_index") if isinstance(marker, dict) else None
    if isinstance(content, (list, tuple)) and isinstance(index, int) and -len(content) <= index < len(content):
        spliced = list(content)
        spliced[index] = shown
        return spliced
    if isinstance(content, dict) and isinstance(index, (str, int)) and not isinstance(index, bool):
        # The described dict keeps the native keys (an `int` key becomes its digits when written as JSON).
        key = index if index in content else str(index)
        return {**content, key: shown} if key in content else content
    return content


def presented(value: Any, described: Any, native: Tuple[type, ...]) -> Any:
    """``described`` (a tool's returned ``value`` described) where the reference writes the JSON text of what is not a
    ``str``: the whole value, or, when it is a list holding native content, each of its other items. A value that is
    not a ``str`` but whose JSON form is one (an ``Enum``, a ``UUID``, a ``Decimal``, a ``datetime``, a model whose
    dump is a string) is presented as that form's text, quotes and all; the core keeps a ``str`` as the text, so it
    is handed that text. ``described`` itself when nothing changes."""
    if not isinstance(value, (list, tuple)):
        return _text_of_scalar(value, described, native)
    if not any(isinstance(item, native) for item in value):
        return described
    items = [_text_of_scalar(old, new, native) for old, new in zip(value, described)]
    return described if all(new is old for new, old in zip(items, described)) else items


def tool_value(value: Any) -> Any:
    """A tool's returned value in the form the core's projection reads (``tool_result_content``), as the reference
    projects it: described (``_described``), native content as its dump (the core recognises it by its shape),
    anything else without a JSON form of its own as Pydantic's JSON-mode dump (an ``Enum``, a ``UUID``, a
    ``datetime``, a ``set``, a dict's keys that are not strings), then presented (``presented``). Raises
    ``ValueError`` for NaN or an infinity, as the reference does."""
    native = _native_content()
    form = _jsonable(_described(value, native, strict=True), native)
    if not _finite(form):
        raise ValueError(_NOT_FINITE)
    return presented(value, form, native)


def _jsonable(value: Any, native: Tuple[type, ...]) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, native):
        return dump(value)
    if isinstance(value, dict):
        items = {key: _jsonable(item, native) for key, item in value.items()}
        if all(isinstance(key, str) for key in items):
            return items
        return _adapter(Any).dump_python(items, mode="json", warnings="error")
    if isinstance(value, (list, tuple)):
        return [_jsonable(item, native) for item in value]
    return _adapter(Any).dump_python(value, mode="json", warnings="error")


def public_value(value: Any) -> Any:
    """``content.public_tool_value``: ``_described``, with native content projected as the Harness projects input
    content, and every dict and list made anew."""
    native = _native_content()
    return _public(_described(value, native), native)


def _public(value: Any, native: Tuple[type, ...]) -> Any:
    if isinstance(value, native):
        from a13n_harness.content import project_input_content

        projected = project_input_content(typing.cast(Any, value))
        return projected[0] if projected is not None and projected[1].display else {"payload_omitted": True}
    if isinstance(value, dict):
        return {key: _public(item, native) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_public(item, native) for item in value]
    return value


def _text_of_scalar(value: Any, described: Any, native: Tuple[type, ...]) -> Any:
    if value is None or isinstance(value, (str, bool, int, float, dict, list, tuple, *native)):
        return described
    form = described if described is not value else _adapter(Any).dump_python(value, mode="json", warnings="error")
    return json.dumps(form, ensure_ascii=False) if isinstance(form, str) else described


def is_tool_result(cls: type) -> bool:
    """Whether ``cls`` is Pydantic AI's function or output tool result event."""
    from pydantic_ai import messages

    kinds = tuple(getattr(messages, name) for name in ("FunctionToolResultEvent", "OutputToolResultEvent"))
    return issubclass(cls, kinds)


def source_kind(cls: type) -> int:
    """1 for a ``HarnessEvent`` type, 2 for a ``HarnessRunResultEvent`` type, 0 for anything else."""
    try:
        from a13n_harness.events import HarnessEvent, HarnessRunResultEvent
    except ImportError:
        return 0
    if issubclass(cls, HarnessEvent):
        return 1
    if issubclass(cls, HarnessRunResultEvent):
        return 2
    return 0


def validation_error(item: Any) -> Optional[BaseException]:
    """Pydantic's own error for a native item whose first-party payload fails its model (an inline delegation)."""
    try:
        from a13n_harness.events import InlineDelegationPayload
        from pydantic import ValidationError
    except ImportError:
        return None
    payload = getattr(getattr(item, "event", None), "payload", None)
    try:
        InlineDelegationPayload.model_validate(payload)
    except ValidationError as error:
        return error
    return None

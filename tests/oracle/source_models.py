"""Write the Harness and Pydantic AI source-event models as a Rust table (crates/a13n-stream-protocol/src/source_model/table.rs).

The reference consumes native objects: a journal line becomes an event of its model, so the model decides the
dump's key order, the defaults of omitted fields and what happens to unknown keys. This script reads those models
(`a13n-harness` 0.21.0 and the Pydantic AI it pins) and writes, for each, its fields in declaration order with
their JSON keys, defaults, literal values and nested model types.

usage (with a13n-harness==0.21.0 installed under Python 3.13):
    python -W ignore tests/oracle/source_models.py > crates/a13n-stream-protocol/src/source_model/table.rs
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import pkgutil
import datetime
import json
import types
import typing
from typing import Any

import a13n_harness  # noqa: F401  (registers the Harness's capability events)
import a13n_harness.events as harness_events
import pydantic_ai.messages as m
from a13n_harness.result import SafeFailure
from a13n_harness.tools.deferred import DeferredToolRequests
from pydantic import AliasChoices, BaseModel, TypeAdapter
from typing_extensions import is_typeddict  # also knows `typing_extensions.TypedDict`, which Pydantic AI uses

# Every capability and custom event class the Harness defines registers itself when its module is imported; a
# Harness that emits one has imported it, so all are imported here.
for _module in pkgutil.walk_packages(a13n_harness.__path__, "a13n_harness."):
    try:
        importlib.import_module(_module.name)
    except Exception:  # noqa: BLE001 - an optional integration whose dependency is absent
        pass

# The keys the discriminators of the models' unions read; and the typed parts, which Pydantic AI's part
# discriminator picks by `(part_kind, tool_kind)` (a successful outcome only), falling back to the base part.
TAG_KEYS = {"event_kind", "part_kind", "part_delta_kind", "kind", "name"}
TYPED_PARTS = set(m._TYPED_PART_TAGS_BY_TYPE)  # noqa: SLF001

MODELS: list[dict] = []
# A computed field returning the value given under its alias, or else the start of the SHA-1 of another field.
DIGEST = re.compile(r"return self\._\w+ or _multi_modal_content_identifier\(self\.(\w+)\)")
INDEX: dict[type, int] = {}
FAMILIES = {m.CapabilityEvent: ("kind", m.CAPABILITY_EVENT_TYPES, m.UnknownCapabilityEvent),
            m.CustomEvent: ("name", m.CUSTOM_EVENT_TYPES, m.UnknownCustomEvent)}


def is_model(t: Any) -> bool:
    return isinstance(t, type) and (dataclasses.is_dataclass(t) or issubclass(t, BaseModel) or is_typeddict(t))


def members(t: Any) -> list[Any]:
    origin = typing.get_origin(t)
    if origin in (typing.Annotated, typing.NotRequired, typing.Required):
        return members(typing.get_args(t)[0])
    if origin in (typing.Union, types.UnionType):
        return [x for a in typing.get_args(t) for x in members(a)]
    if isinstance(t, typing.TypeAliasType):
        return members(t.__value__)
    if is_model(origin):  # a generic model, parametrised
        return [origin]
    return [t]


def shape(t: Any) -> str:
    """The Rust `Ty` of a field's annotation."""
    found = members(t)
    models, lists, dicts, times = [], [], [], False
    for x in found:
        origin = typing.get_origin(x)
        if x is type(None):
            continue
        if is_model(x):
            models.extend(family(x))
        elif origin in (list, tuple, typing.Sequence, __import__("collections.abc").abc.Sequence):
            for a in typing.get_args(x):
                lists.extend(y for z in members(a) if is_model(z) for y in family(z))
        elif origin is dict:
            args = typing.get_args(x)
            if len(args) == 2:
                dicts.extend(y for z in members(args[1]) if is_model(z) for y in family(z))
        elif x is datetime.datetime:
            times = True
    if models:
        return f"Ty::One(&[{', '.join(map(str, models))}])"
    if lists:
        return f"Ty::List(&[{', '.join(map(str, lists))}])"
    if dicts:
        return f"Ty::Dict(&[{', '.join(map(str, dicts))}])"
    given = [x for x in found if x is not type(None)]
    if times and len(given) == 1:
        return "Ty::Time"
    # Scalars Pydantic's lax mode reads from other spellings (`"3"` or `3.0` for an int, `"yes"` for a bool, `3` for
    # a float); a bool may share its field with string literals (`bool | Literal['allow-local']`).
    if given and all(x is int for x in given):
        return "Ty::Scalar(Scalar::Int)"
    if bool in given and all(x is bool or literal(x) is not None for x in given):
        return "Ty::Scalar(Scalar::Bool)"
    if given and all(x is float for x in given):
        return "Ty::Scalar(Scalar::Float)"
    return "Ty::Any"


def family(cls: type) -> list[int]:
    """The models a value annotated `cls` may be: for an event family, its registered classes. An event of a
    kind none of them has was made by a class this table does not know (the process that emitted it had it), so
    its line is kept as written, which is that class's dump; the family's unknown envelope is not used."""
    if cls in FAMILIES:
        tag_field, registry, _ = FAMILIES[cls]
        return [model(c, tag=(tag_field, tag)) for tag, c in registry.items()]
    return [model(cls)]


def literal(t: Any) -> list[str] | None:
    found = members(t)
    if len(found) == 1 and typing.get_origin(found[0]) is typing.Literal:
        values = typing.get_args(found[0])
        if all(isinstance(v, str) for v in values):
            return list(values)
    return None


def constant_factory(factory: Any) -> bool:
    """A factory that makes the same value each time (an empty list, a model of defaults), not a fresh id or the
    current time."""
    try:
        first, second = factory(), factory()
    except TypeError:  # a factory that takes the validated data
        return False
    if isinstance(first, (str, datetime.datetime)):
        return False
    dump = TypeAdapter(type(first)).dump_json
    return dump(first) == dump(second)


def default_json(field_type: Any, value: Any) -> str:
    return json.dumps(TypeAdapter(field_type).dump_python(value, mode="json"), separators=(",", ":"))


def computed(cls: type, name: str) -> str:
    """The default of a computed field that reads a given value: a digest of another field (`identifier`), or
    nothing this table can compute (a URL's `media_type`, guessed from its extension)."""
    found = DIGEST.search(inspect.getsource(cls.__pydantic_decorators__.computed_fields[name].func))
    return f"Default::Digest({json.dumps(found.group(1))})" if found else "Default::Computed"


def base64_bytes(config: dict, annotation: Any) -> bool:
    """A `bytes` field of a model that reads and writes bytes as base64 text."""
    given = [x for x in members(annotation) if x is not type(None)]
    return config.get("val_json_bytes") == "base64" and bool(given) and all(x is bytes for x in given)


def read_as(key: str, infos: list[Any]) -> list[str]:
    """The keys a field is read under, in the order Pydantic tries them (its `validation_alias`); empty when it is
    read under its key alone."""
    for info in infos:
        alias = info.validation_alias
        if alias is None:
            continue
        choices = list(alias.choices) if isinstance(alias, AliasChoices) else [alias]
        if not all(isinstance(choice, str) for choice in choices):
            raise SystemExit(f"{key}: an alias path is not modelled")
        return choices
    return []


def model(cls: type, tag: tuple[str, str] | None = None) -> int:
    if cls in INDEX:
        return INDEX[cls]
    INDEX[cls] = len(MODELS)
    entry: dict = {"name": cls.__qualname__, "fields": []}
    MODELS.append(entry)
    hints = typing.get_type_hints(cls, include_extras=True)
    rows = []
    config: dict = {}
    if is_typeddict(cls):
        # Keys in declaration order; an absent key that is not required stays absent.
        extra = "ignore"
        for name, hint in hints.items():
            rows.append((name, hint, "Default::Required" if name in cls.__required_keys__ else "Default::Factory", []))
    elif dataclasses.is_dataclass(cls) and not issubclass(cls, BaseModel):
        config = getattr(cls, "__pydantic_config__", {}) or {}
        extra = config.get("extra", "ignore")
        # An excluded field read under an alias, which a computed field of that name dumps (below).
        given = {x.alias for f in dataclasses.fields(cls)
                 for x in getattr(hints[f.name], "__metadata__", ()) if type(x).__name__ == "FieldInfo" and x.exclude}
        for f in dataclasses.fields(cls):
            info = [x for x in getattr(hints[f.name], "__metadata__", ()) if type(x).__name__ == "FieldInfo"]
            if not f.init or any(x.exclude for x in info):
                continue
            if f.default is not dataclasses.MISSING:
                default = f"Default::Json({json.dumps(default_json(hints[f.name], f.default))})"
            elif f.default_factory is not dataclasses.MISSING and constant_factory(f.default_factory):
                default = f"Default::Json({json.dumps(default_json(hints[f.name], f.default_factory()))})"
            elif f.default_factory is not dataclasses.MISSING:
                default = "Default::Factory"
            else:
                default = "Default::Required"
            rows.append((f.name, hints[f.name], default, read_as(f.name, info)))
        decorators = getattr(cls, "__pydantic_decorators__", None)
        for name in decorators.computed_fields if decorators is not None else ():
            if name not in given:
                raise SystemExit(f"{cls.__qualname__}.{name}: a computed field of no input; not modelled")
            rows.append((name, Any, computed(cls, name), []))
    else:
        config = dict(cls.model_config)
        extra = config.get("extra") or "ignore"
        excluded = {}
        for name, info in cls.model_fields.items():
            key = info.serialization_alias or info.alias or name
            if info.exclude:
                # Read under its alias and dumped, if at all, by a computed field of that name (below).
                excluded[key] = info
                continue
            if info.is_required():
                default = "Default::Required"
            elif info.default_factory is not None:
                value = info.default_factory() if constant_factory(info.default_factory) else None
                default = (f"Default::Json({json.dumps(default_json(info.annotation, value))})"
                           if value is not None else "Default::Factory")
            else:
                default = f"Default::Json({json.dumps(default_json(info.annotation, info.default))})"
            rows.append((key, info.annotation, default, read_as(key, [info])))
        for name in cls.model_computed_fields:
            info = excluded.get(name)
            if info is None:
                raise SystemExit(f"{cls.__qualname__}.{name}: a computed field of no input; not modelled")
            value = json.loads(info.default) if isinstance(info.default, bytes) else info.default
            rows.append((name, Any, f"Default::Json({json.dumps(json.dumps(value, separators=(',', ':')))})", []))
    entry["extra"] = {"ignore": "Extra::Ignore", "forbid": "Extra::Forbid", "allow": "Extra::Allow"}[extra]
    fields = []
    for key, annotation, default, keys in rows:
        # A family's registered class is told apart by its tag (the registry's key), whatever its annotation; a
        # typed part (a tool search call, ...) is chosen only for a successful outcome.
        lit = [tag[1]] if tag and key == tag[0] else literal(annotation)
        if cls in TYPED_PARTS and key == "outcome":
            lit = ["success"]
        lit_rust = f"&[{', '.join(json.dumps(v) for v in lit)}]" if lit else "&[]"
        ty = "Ty::Scalar(Scalar::Base64)" if base64_bytes(config, annotation) else shape(annotation)
        is_tag = key in TAG_KEYS or (cls in TYPED_PARTS and key == "tool_kind")
        read_rust = f"&[{', '.join(json.dumps(k) for k in keys)}]"
        fields.append((key, ty, default, lit_rust, is_tag, read_rust))
    entry["fields"] = fields
    return INDEX[cls]


def main() -> None:
    by_kind: dict[str, list[int]] = {}
    for t in members(m.AgentStreamEvent):
        for idx in family(t) if t in FAMILIES else [model(t)]:
            for key, _, _, lit, _, _ in MODELS[idx]["fields"]:
                if key == "event_kind":
                    for kind in json.loads("[" + lit[2:-1] + "]"):
                        by_kind.setdefault(kind, []).append(idx)
    extension = model(harness_events.HarnessExtensionEvent)
    failure = model(SafeFailure)
    deferred = model(DeferredToolRequests)
    print("// @generated by tests/oracle/source_models.py from a13n-harness 0.21.0; do not edit by hand.")
    print("use super::{Default, Extra, Field, Model, Scalar, Ty};\n")
    print(f"/// A Harness extension event (a line's `event` without `event_kind`).\npub(crate) const EXTENSION: usize = {extension};\n")
    print(f"/// A Run result's `failure`.\npub(crate) const FAILURE: usize = {failure};\n")
    print(f"/// A Run result's `deferred` tool requests.\npub(crate) const DEFERRED: usize = {deferred};\n")
    print("/// The models an `event` may be, by its `event_kind`, in the order they are tried.")
    print("pub(crate) static EVENTS: &[(&str, &[usize])] = &[")
    for kind, indices in by_kind.items():
        print(f"    ({json.dumps(kind)}, &[{', '.join(map(str, indices))}]),")
    print("];\n")
    print("pub(crate) static MODELS: &[Model] = &[")
    for i, entry in enumerate(MODELS):
        print(f"    // {i}")
        print(f"    Model {{ name: {json.dumps(entry['name'])}, extra: {entry['extra']}, fields: &[")
        for key, ty, default, lit, is_tag, read in entry["fields"]:
            print(f"        Field {{ key: {json.dumps(key)}, ty: {ty}, default: {default}, literal: {lit}, "
                  f"tag: {'true' if is_tag else 'false'}, read_as: {read} }},")
        print("    ] },")
    print("];")


if __name__ == "__main__":
    main()

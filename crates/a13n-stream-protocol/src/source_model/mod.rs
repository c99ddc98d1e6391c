//! The source events' models: what a Python host's objects make of an event, whatever its line's layout.
//!
//! The reference consumes native objects, so an event's dump follows its model: fields in declaration order (a
//! field given under an alias dumped under its own key), defaults for omitted fields, unknown keys dropped (or,
//! where the model says so, kept or refused; a typed dict drops them), scalars as the model's lax mode reads them,
//! a content's base64 rewritten and its identifier computed. A journal line may spell the same event otherwise
//! (keys in another order, defaults left out, keys no model has); the general path decodes it into the model's
//! layout here ([`normalize_event`]), and the fast lanes, which copy what they scan, take a line only when it is
//! already in that layout ([`layout`]), or once it is written in it by the same table ([`laid_out`]).
//!
//! `table.rs` is generated from the models themselves (`tests/oracle/source_models.py`).

use serde_json::Value;

use crate::error::{InputError, InputKind};
use crate::fields::event_kind as kinds;
use crate::fields::source_key::{self, CAPABILITY_IDS};
use crate::json::Object;
use crate::lax_time::unix_time_of_number;

pub(crate) mod laid_out;
pub(crate) mod laid_out_memo;
pub(crate) mod layout;
mod scalar;

pub(crate) use scalar::Scalar;
#[rustfmt::skip] // generated: kept as the generator writes it
mod table;

/// One model: a dataclass or Pydantic model an event (or a value inside one) validates into.
pub(crate) struct Model {
    pub(crate) name: &'static str,
    pub(crate) extra: Extra,
    pub(crate) fields: &'static [Field],
}

/// A model's field, in declaration order (the order its dump writes).
pub(crate) struct Field {
    /// The JSON key (the serialization alias where there is one).
    pub(crate) key: &'static str,
    pub(crate) ty: Ty,
    pub(crate) default: Default,
    /// The strings a `Literal` field admits (empty for any other field): what tells apart the models a value
    /// may be.
    pub(crate) literal: &'static [&'static str],
    /// A field a discriminator reads (`part_kind`, `event_kind`, a family's `kind`, a typed part's `tool_kind`):
    /// where a value may be one of several models, it must be present to choose this one.
    pub(crate) tag: bool,
    /// The keys the field is read under, in the order Pydantic tries them (its `validation_alias`:
    /// `tools_added`, then `added`); empty when it is read under its key alone.
    pub(crate) read_as: &'static [&'static str],
}

impl Field {
    /// The value `object` gives the field: under its key, or the first of the keys it is read under; every one of
    /// those keys is taken out of `object`.
    fn take(&self, object: &mut Object) -> Option<Value> {
        if self.read_as.is_empty() {
            return object.shift_remove(self.key);
        }
        self.read_as.iter().fold(None, |found, key| {
            let value = object.shift_remove(*key);
            found.or(value)
        })
    }

    /// Whether `key` is one the field is read under but does not dump as.
    pub(crate) fn read_under(&self, key: &str) -> bool {
        key != self.key && self.read_as.contains(&key)
    }
}

/// What a field's value is, as far as its layout goes.
pub(crate) enum Ty {
    /// Kept as given (a string, a number, a JSON value, a union without models).
    Any,
    /// One of these models (an object), or anything else kept as given.
    One(&'static [usize]),
    /// A list of these models.
    List(&'static [usize]),
    /// A mapping whose values are these models.
    Dict(&'static [usize]),
    /// A date-time, dumped in Pydantic's layout.
    Time,
    /// An `int`, `bool` or `float` read in Pydantic's lax mode, or base64 `bytes` ([`scalar`]).
    Scalar(Scalar),
}

/// An omitted field's value.
pub(crate) enum Default {
    /// None: the event is not valid without it.
    Required,
    /// This JSON.
    Json(&'static str),
    /// Made when the object is (a fresh id, the current time): no journal line can stand for it, so it stays
    /// absent.
    Factory,
    /// A computed field that reads a given value (a URL's `media_type`): dumped after the fields, as given; a line
    /// without it stays without it here, where the reference computes it from the URL's extension.
    Computed,
    /// A computed field that reads a given value, or where none or an empty one is given, is the first six hex
    /// digits of the SHA-1 of the named field (a content's `identifier`, of its bytes or its URL) ([`digest`]).
    Digest(&'static str),
}

/// What a model does with keys it does not declare.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// Dropped (the default of dataclasses and Pydantic models).
    Ignore,
    /// Refused.
    Forbid,
    /// Kept after the declared fields, in their order.
    Allow,
}

/// The models an event may be, by its `event_kind`: an extension event has none; an event kind this table does
/// not know has no model (its line is kept as written).
pub(crate) fn event_models(event_kind: Option<&str>) -> &'static [usize] {
    match event_kind {
        None => std::slice::from_ref(&table::EXTENSION),
        Some(kind) => table::EVENTS.iter().find(|(name, _)| *name == kind).map_or(&[], |(_, models)| models),
    }
}

pub(crate) fn model(index: usize) -> &'static Model {
    &table::MODELS[index]
}

/// The first of `choices` whose literal fields all admit `object`'s values (or, where absent, have a default and
/// are not a discriminator's among several choices);
/// `None` when none does (an event of a capability or custom kind this table does not know: its line is the dump
/// of a class the emitting process had, so it is kept as written).
pub(crate) fn choose<'v>(
    choices: &[usize],
    literal_of: impl Fn(&str) -> Option<Option<&'v str>>,
) -> Option<&'static Model> {
    choices.iter().map(|&index| model(index)).find(|model| {
        model.fields.iter().filter(|field| !field.literal.is_empty()).all(|field| match literal_of(field.key) {
            None => !matches!(field.default, Default::Required) && (!field.tag || choices.len() == 1),
            Some(Some(value)) => field.literal.contains(&value),
            Some(None) => false,
        })
    })
}

/// `event` in its model's layout: what dumping the object a Python host validates it into writes.
pub(crate) fn normalize_event(event: Object) -> Result<Object, InputError> {
    let capability = event.get(source_key::EVENT_KIND).and_then(Value::as_str) == Some(kinds::CAPABILITY);
    if capability && no_class_has(event.get(source_key::KIND)) {
        return Ok(unknown_capability(event));
    }
    let choices = match event.get(source_key::EVENT_KIND) {
        None => event_models(None),
        Some(kind) => event_models(Some(kind.as_str().unwrap_or_default())),
    };
    normalize_object(event, choices)
}

/// Whether no capability class can have this `kind`: none given (the model's default is `""`), or a string that is
/// not `NAMESPACE.NAME` with both parts non-empty, which Pydantic AI registers every class under. (Any other kind may
/// be a class of the writer's, and a kind that is not a string is refused.)
fn no_class_has(kind: Option<&Value>) -> bool {
    match kind {
        None => true,
        Some(Value::String(kind)) => {
            !kind.split_once('.').is_some_and(|(space, name)| !space.is_empty() && !name.is_empty())
        }
        Some(_) => false,
    }
}

/// A capability event of a kind no class has ([`no_class_has`]), in the layout of the unknown envelope every process
/// reads it into: the payload's keys first, as written (a `data` key among them), then the envelope's fields
/// (`kind` as given or `""`, the ids as given or `null`, `event_kind`); with no payload, `"data": null` last. Every
/// other capability event is the dump of a class its writer had, and stays as written.
fn unknown_capability(mut event: Object) -> Object {
    let kind = event.shift_remove(source_key::KIND).unwrap_or_else(|| Value::String(String::new()));
    let ids = CAPABILITY_IDS.map(|key| event.shift_remove(key).unwrap_or(Value::Null));
    let event_kind = event.shift_remove(source_key::EVENT_KIND).unwrap_or(Value::Null);
    let empty = event.is_empty();
    event.insert(source_key::KIND.into(), kind);
    event.extend(CAPABILITY_IDS.into_iter().map(String::from).zip(ids));
    event.insert(source_key::EVENT_KIND.into(), event_kind);
    if empty {
        event.insert(source_key::DATA.into(), Value::Null);
    }
    event
}

/// A Run result's `failure` and `deferred` in their models' layouts (the reference dumps the failure into the
/// terminal event and reads the deferred calls' parts).
pub(crate) fn normalize_result(mut result: Object) -> Result<Object, InputError> {
    for (key, index) in [("failure", table::FAILURE), ("deferred", table::DEFERRED)] {
        if let Some(Value::Object(_)) = result.get(key) {
            let Some(Value::Object(object)) = result.get_mut(key).map(std::mem::take) else { continue };
            let normalized = normalize_object(object, std::slice::from_ref(&index)).map_err(|e| e.nested(key))?;
            result.insert(key.to_owned(), Value::Object(normalized));
        }
    }
    Ok(result)
}

fn literal_in<'o>(object: &'o Object) -> impl Fn(&str) -> Option<Option<&'o str>> + 'o {
    |key| object.get(key).map(Value::as_str)
}

fn normalize_object(mut object: Object, choices: &[usize]) -> Result<Object, InputError> {
    let Some(model) = choose(choices, literal_in(&object)) else { return Ok(object) };
    if in_layout(&object, model) {
        return Ok(object);
    }
    let mut out = Object::with_capacity(model.fields.len());
    for field in model.fields {
        let given = match (field.take(&mut object), &field.default) {
            (Some(value), Default::Digest(of)) if unset(&value) => digest(&out, model, of).or(Some(value)),
            (None, Default::Digest(of)) => digest(&out, model, of),
            (given, _) => given,
        };
        match given {
            Some(value) => {
                let value = normalize_value(value, &field.ty).map_err(|e| e.nested(field.key))?;
                out.insert(field.key.to_owned(), value);
            }
            None => {
                if let Default::Json(text) = field.default {
                    out.insert(field.key.to_owned(), serde_json::from_str(text).unwrap_or(Value::Null));
                }
            }
        }
    }
    match model.extra {
        Extra::Ignore => {}
        Extra::Allow => out.extend(object),
        Extra::Forbid => {
            if let Some(key) = object.keys().next() {
                let message = format!("extra field `{key}` is not permitted in {}", model.name);
                return Err(InputError::of(InputKind::Shape, key.clone(), message));
            }
        }
    }
    Ok(out)
}

/// A value a [`Default::Digest`] field computes in place of: none given (`null`) or an empty one.
fn unset(value: &Value) -> bool {
    value.is_null() || value.as_str() == Some("")
}

/// [`unset`], for the value as a line writes it (no escape spells an empty string).
pub(crate) fn unset_text(text: &[u8]) -> bool {
    matches!(text, b"null" | b"\"\"")
}

/// The identifier Pydantic AI computes for a content from field `of` of `object` (its fields so far): the first six
/// hex digits of the SHA-1 of its bytes (decoded, for base64 bytes) or its text's UTF-8. `None` when it is not text
/// the model reads (the line is then refused by the rules that read it, or kept as given).
fn digest(object: &Object, model: &Model, of: &str) -> Option<Value> {
    use sha1::{Digest, Sha1};
    let text = object.get(of)?.as_str()?;
    let base64 = model.fields.iter().any(|field| field.key == of && matches!(field.ty, Ty::Scalar(Scalar::Base64)));
    let hash = match base64 {
        true => Sha1::digest(scalar::base64_bytes(text)?),
        false => Sha1::digest(text.as_bytes()),
    };
    Some(Value::String(hash[..3].iter().map(|byte| format!("{byte:02x}")).collect()))
}

fn normalize_value(value: Value, ty: &Ty) -> Result<Value, InputError> {
    Ok(match (ty, value) {
        (Ty::One(choices), Value::Object(object)) => Value::Object(normalize_object(object, choices)?),
        (Ty::List(choices), Value::Array(items)) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(at, item)| normalize_value(item, &Ty::One(choices)).map_err(|e| e.nested(&at.to_string())))
                .collect::<Result<_, _>>()?,
        ),
        (Ty::Dict(choices), Value::Object(entries)) => {
            let mut out = Object::with_capacity(entries.len());
            for (key, item) in entries {
                let item = normalize_value(item, &Ty::One(choices)).map_err(|e| e.nested(&key))?;
                out.insert(key, item);
            }
            Value::Object(out)
        }
        (Ty::Time, Value::String(text)) => Value::String(crate::lax_time::pydantic_datetime(&text).unwrap_or(text)),
        (Ty::Time, Value::Number(number)) => match unix_time_of_number(number.as_str()) {
            Some(time) => Value::String(time.to_string()),
            None => Value::Number(number),
        },
        (Ty::Scalar(scalar), value) => scalar::held(&value, *scalar).unwrap_or(value),
        (_, value) => value,
    })
}

/// Whether `object` holds exactly `model`'s fields in its order, nested models too (then nothing changes).
fn in_layout(object: &Object, model: &Model) -> bool {
    if object.len() != model.fields.len() {
        return false;
    }
    object.iter().zip(model.fields).all(|((key, value), field)| {
        key == field.key
            && value_in_layout(value, &field.ty)
            && !(matches!(field.default, Default::Digest(_)) && unset(value))
    })
}

fn value_in_layout(value: &Value, ty: &Ty) -> bool {
    match (ty, value) {
        (Ty::One(choices), Value::Object(object)) => {
            choose(choices, literal_in(object)).is_none_or(|model| in_layout(object, model))
        }
        (Ty::List(choices), Value::Array(items)) => items.iter().all(|item| value_in_layout(item, &Ty::One(choices))),
        (Ty::Dict(choices), Value::Object(entries)) => {
            entries.values().all(|item| value_in_layout(item, &Ty::One(choices)))
        }
        (Ty::Time, Value::String(text)) => {
            crate::lax_time::pydantic_datetime(text).is_none_or(|written| written == *text)
        }
        (Ty::Time, Value::Number(number)) => unix_time_of_number(number.as_str()).is_none(),
        (Ty::Scalar(scalar), value) => scalar::held(value, *scalar).is_none(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use crate::source::SourceItem;

    /// Found by a new user's trial of the Python package: a model-made file's `BinaryContent` lost the
    /// `identifier` its dump writes (a computed field reading a given value), because the table did not have it and
    /// the key was dropped as unknown.
    #[test]
    fn a_computed_field_that_is_given_is_kept_in_its_place() {
        let head = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":"#;
        let spelled = r#"{"event_kind":"part_start","part":{"part_kind":"file","content":{"identifier":"4effda","kind":"binary","media_type":"image/png","data":"iVBORw=="}},"index":0}"#;
        let item = SourceItem::from_json(&format!("{head}{spelled}}}")).unwrap();
        let dumped = r#"{"index":0,"part":{"content":{"data":"iVBORw==","media_type":"image/png","vendor_metadata":null,"kind":"binary","identifier":"4effda"},"id":null,"provider_name":null,"provider_details":null,"part_kind":"file"},"previous_part_kind":null,"event_kind":"part_start"}"#;
        assert_eq!(item.to_line(), format!("{head}{dumped}}}"));
        // Not given, it is computed from the data, as the model wrote it.
        let without = spelled.replace(r#""identifier":"4effda","#, "");
        let item = SourceItem::from_json(&format!("{head}{without}}}")).unwrap();
        assert_eq!(item.to_line(), format!("{head}{dumped}}}"));
    }

    /// A part's `index` written `"3"` was read as no index, so the part was not one and its events became
    /// observations; the model's lax mode holds 3 (found comparing `tests/oracle/lax_cases.py` with the reference).
    #[test]
    fn scalar_fields_hold_what_lax_mode_reads() {
        let head = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":"#;
        let start = r#"{"index":" +3 ","part":{"content":"hi","part_kind":"text"},"event_kind":"part_start"}"#;
        let item = SourceItem::from_json(&format!("{head}{start}}}")).unwrap();
        assert!(item.to_line().contains(r#""event":{"index":3,"part":"#), "{}", item.to_line());
        let call = r#"{"part":{"tool_name":"f","args":{"n":"1"},"tool_call_id":"c1","part_kind":"tool-call"},"args_valid":"yes","event_kind":"function_tool_call"}"#;
        let line = SourceItem::from_json(&format!("{head}{call}}}")).unwrap().to_line();
        // The declared `bool` is read; a free-form value is kept as written.
        assert!(line.contains(r#""args":{"n":"1"}"#) && line.contains(r#""args_valid":true"#), "{line}");
    }

    /// Found by helper-65: `tools_added` given under its alias `added` was dropped as an unknown key (the change
    /// then named no tool), and a tool search's arguments kept keys its typed dict drops.
    #[test]
    fn aliases_are_read_and_typed_dicts_drop_what_they_do_not_declare() {
        let head = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":"#;
        let line = |event: &str| SourceItem::from_json(&format!("{head}{event}}}")).unwrap().to_line();
        let change = |part: &str| line(&format!(r#"{{"part":{part},"event_kind":"tool_availability_delta"}}"#));
        let dumped = |added: &str| {
            format!(
                r#"{{"part":{{"tools_added":{added},"tool_call_id":null,"part_kind":"tool-availability-delta"}},"event_kind":"tool_availability_delta"}}"#
            )
        };
        assert!(change(r#"{"added":["x"],"part_kind":"tool-availability-delta"}"#)
            .ends_with(&format!("{}}}", dumped(r#"["x"]"#))));
        let both = change(r#"{"added":["x"],"tools_added":["y"],"part_kind":"tool-availability-delta"}"#);
        assert!(both.ends_with(&format!("{}}}", dumped(r#"["y"]"#))), "{both}");
        let search = line(
            r#"{"index":0,"part":{"tool_name":"search_tools","args":{"k":1,"queries":["q"]},"tool_call_id":"c","tool_kind":"tool-search","part_kind":"tool-call"},"event_kind":"part_start"}"#,
        );
        assert!(search.contains(r#""args":{"queries":["q"]},"#), "{search}");
    }

    /// Found by helper-65: a content's bytes are read from base64 in either alphabet, padded or not, and written
    /// URL-safe and padded; its `identifier`, when none or an empty one is given, is computed from them. Both were
    /// kept as given.
    #[test]
    fn binary_content_is_held_as_bytes_and_named_by_their_digest() {
        let head = r#"{"thread_id":"t","run_id":"r","sequence":1,"occurred_at":"2026-11-29T12:00:01+00:00","event":"#;
        let file = |content: &str| {
            let line = format!(
                r#"{head}{{"index":0,"part":{{"content":{content},"part_kind":"file"}},"event_kind":"part_start"}}}}"#
            );
            SourceItem::from_json(&line).unwrap().to_line()
        };
        let held = r#""content":{"data":"aGVsbG_7_w==","media_type":"image/png","vendor_metadata":null,"kind":"binary","identifier":"154738"}"#;
        for content in [
            r#"{"data":"aGVsbG/7/w","media_type":"image/png","kind":"binary"}"#,
            r#"{"data":"aGVsbG_7_w==","media_type":"image/png","kind":"binary","identifier":null}"#,
            r#"{"identifier":"","kind":"binary","media_type":"image/png","data":"aGVsbG/7/w=="}"#,
        ] {
            assert!(file(content).contains(held), "{}", file(content));
        }
        // Given, it is kept; bytes the model refuses are kept as written, and nothing is computed from them.
        let given = file(r#"{"data":"YQ","media_type":"image/png","kind":"binary","identifier":"mine"}"#);
        assert!(given.contains(r#""data":"YQ==","#) && given.contains(r#""identifier":"mine"}"#), "{given}");
        let refused = file(r#"{"data":"YR==","media_type":"image/png","kind":"binary"}"#);
        assert!(refused.contains(r#""data":"YR==","#) && !refused.contains("identifier"), "{refused}");
    }
}

//! The named host processors of the conformance corpus.

use a13n_stream_protocol::agui::CustomEvent;
use a13n_stream_protocol::{infallible, AguiEventProcessor, Event};

/// The processor a case names, or an error for an unknown name.
pub fn named(name: &str) -> Result<AguiEventProcessor, String> {
    Ok(match name {
        "drop_usage" => infallible(|_, event| match &event {
            Event::Custom(custom)
                if matches!(custom.name.as_str(), "a13n.harness.usage" | "a13n.harness.diagnostic") =>
            {
                None
            }
            _ => Some(event),
        }),
        "redact_text" => infallible(|_, event| match event {
            Event::TextMessageContent(mut content) => {
                content.delta = "*".repeat(content.delta.chars().count());
                Some(Event::TextMessageContent(content))
            }
            other => Some(other),
        }),
        "bad_structural" => infallible(|_, event| match event {
            Event::TextMessageStart(mut start) => {
                start.message_id = "rewritten".into();
                Some(Event::TextMessageStart(start))
            }
            other => Some(other),
        }),
        "bad_type" => infallible(|_, event| match event {
            Event::ToolCallStart(start) => Some(Event::Custom(CustomEvent {
                timestamp: start.timestamp,
                name: "replaced".into(),
                value: serde_json::Value::Null,
                ..CustomEvent::default()
            })),
            other => Some(other),
        }),
        other => {
            return Err(format!(
                "unknown processor {other:?} (known: drop_usage, redact_text, bad_structural, bad_type)"
            ))
        }
    })
}

/// The processor of an optional name.
pub fn optional(name: Option<&str>) -> Result<Option<AguiEventProcessor>, String> {
    name.map(named).transpose()
}

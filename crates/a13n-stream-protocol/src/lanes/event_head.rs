//! The fields every AG-UI event a lane writes opens with, described once in the order the event models serialize
//! them: `type`, `timestamp`, and `subagentRunId` when the event is attributed to a child run. (The models' other
//! optional fields before `subagentRunId`, `rawEvent` and `metadata`, are never set on the events the lanes write.)
//! A lane writes the rest of its event after them; a test holds this order to the models'.

use crate::agui::EventType;
use crate::fields::agui_key;
use crate::sink::JsonSink;

/// Open an event of `event_type` and describe its first fields: its type, its `timestamp` in epoch milliseconds,
/// and the child run it is attributed to, if any. The caller describes the event's own fields and closes it.
pub(crate) fn describe_event_head(
    sink: &mut impl JsonSink,
    event_type: EventType,
    timestamp: i64,
    child_run: Option<&str>,
) {
    sink.open();
    sink.key(agui_key::written::TYPE);
    sink.name(event_type.as_str());
    sink.key(agui_key::written::TIMESTAMP);
    sink.integer(timestamp);
    if let Some(run) = child_run {
        sink.key(agui_key::written::SUBAGENT_RUN_ID);
        sink.text(Some(run));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agui::Event;
    use crate::sink::Bytes;

    /// Each event type a lane writes, decoded from its fields in another order and written by the models: its
    /// JSON opens with the head described here, child run or none.
    #[test]
    fn the_head_is_how_the_models_open_an_event() {
        let types = [
            (EventType::Custom, r#""value":null,"name":"n""#),
            (EventType::TextMessageContent, r#""delta":"d","messageId":"m""#),
            (EventType::ReasoningMessageContent, r#""delta":"d","messageId":"m""#),
        ];
        for (event_type, fields) in types {
            for child in [None, Some("child-run")] {
                let scope = child.map(|run| format!(r#""subagentRunId":"{run}","#)).unwrap_or_default();
                let text = format!(r#"{{{fields},{scope}"timestamp":5,"type":"{}"}}"#, event_type.as_str());
                let event: Event = serde_json::from_str(&text).unwrap();
                let mut head = Vec::new();
                describe_event_head(&mut Bytes(&mut head), event_type, 5, child);
                let mut written = Vec::new();
                event.write_json(&mut written);
                assert!(written.starts_with(&head), "{}", String::from_utf8_lossy(&written));
                assert_eq!(written[head.len()], b',', "{}", String::from_utf8_lossy(&written));
            }
        }
    }
}

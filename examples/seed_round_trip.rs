//! The product page's round trip: checkpoint an unfinished message, restore it, append the rest, and get
//! exactly what the uninterrupted fold produces.
//!
//!     cargo run -p a13n-stream-protocol --example seed_round_trip

use a13n_stream_protocol::display::ItemState;
use a13n_stream_protocol::{DisplayFold, DisplaySnapshot};
use serde_json::{json, Map, Value};

fn event(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("an event object")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prefix = vec![
        event(json!({"type": "TEXT_MESSAGE_START", "messageId": "message-1", "role": "assistant", "timestamp": 1000})),
        event(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": "Hello", "timestamp": 1001})),
    ];
    let suffix = vec![
        event(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "message-1", "delta": " world", "timestamp": 1002})),
        event(json!({"type": "TEXT_MESSAGE_END", "messageId": "message-1", "timestamp": 1003})),
    ];

    let mut fold = DisplayFold::new("run-example");
    fold.fold(prefix.clone(), None)?;
    let checkpoint_json = fold.export().to_json();
    println!("checkpoint: {checkpoint_json}");

    let mut restored = DisplayFold::restore(DisplaySnapshot::from_json(&checkpoint_json)?, false, None)?;
    restored.fold(suffix.clone(), None)?;

    let mut uninterrupted = DisplayFold::new("run-example");
    uninterrupted.fold(prefix.into_iter().chain(suffix).collect(), None)?;
    assert_eq!(restored.export().to_json(), uninterrupted.export().to_json());

    let item = restored.items().next().expect("one item");
    assert_eq!(item.content["text"], "Hello world");
    assert_eq!(item.state, ItemState::Completed);
    println!("restored: {}", restored.export().to_json());
    println!("the restored display equals the uninterrupted one");
    Ok(())
}

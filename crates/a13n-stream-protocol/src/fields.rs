//! Every JSON field name (and the few field values) the display fold and the lanes read or write, in one place: the AG-UI
//! event fields it reads from events, the source fields it reads from carried-through Harness items, and the
//! fields it adds to an item's content. Event types are [`EventType`](crate::agui::EventType); `a13n.*` names
//! are in [`names`](crate::names).

/// Declare field names: each as a `&str` constant, and in the module's `written` submodule as the
/// [`Key`](crate::sink::Key) a lane describes JSON with (its name and its `"name":` spelling).
macro_rules! keys {
    ($($(#[$doc:meta])* $name:ident = $text:literal,)*) => {
        // A table of names: some are read only as `written` keys, some only by name.
        $($(#[$doc])* #[allow(dead_code)] pub(crate) const $name: &str = $text;)*

        /// The same names as keys a lane describes JSON with.
        #[allow(dead_code)]
        pub(crate) mod written {
            use crate::sink::Key;
            $(pub(crate) const $name: Key = Key::new($text, concat!("\"", $text, "\":"));)*
        }
    };
}

/// Fields of an AG-UI event (the reference SDK's camelCase names).
pub(crate) mod agui_key {
    keys! {
        TYPE = "type",
        TIMESTAMP = "timestamp",
        METADATA = "metadata",
        SUBAGENT_RUN_ID = "subagentRunId",
        MESSAGE_ID = "messageId",
        PARENT_MESSAGE_ID = "parentMessageId",
        ROLE = "role",
        DELTA = "delta",
        CONTENT = "content",
        TOOL_CALL_ID = "toolCallId",
        TOOL_CALL_NAME = "toolCallName",
        ENTITY_ID = "entityId",
        ENCRYPTED_VALUE = "encryptedValue",
        NAME = "name",
        VALUE = "value",
        /// A content part's text.
        TEXT = "text",
    }

    /// A text content part's `type`.
    pub(crate) const TEXT_PART: &str = "text";

    /// The role of an assistant's message.
    pub(crate) const ROLE_ASSISTANT: &str = "assistant";
    /// The role of a user's message.
    pub(crate) const ROLE_USER: &str = "user";
}

/// Fields of a Harness source item and of the Pydantic AI and Harness events it carries (snake_case).
pub(crate) mod source_key {
    keys! {
        THREAD_ID = "thread_id",
        RUN_ID = "run_id",
        SEQUENCE = "sequence",
        OCCURRED_AT = "occurred_at",
        EVENT = "event",
        /// A terminal item's key, in place of its `event`.
        RESULT = "result",
        INDEX = "index",
        EVENT_KIND = "event_kind",
        PROVIDER_DETAILS = "provider_details",
        PAYLOAD = "payload",
        TYPE = "type",
        PART = "part",
        PART_KIND = "part_kind",
        DELTA = "delta",
        PART_DELTA_KIND = "part_delta_kind",
        ARGS_DELTA = "args_delta",
        TOOL_NAME_DELTA = "tool_name_delta",
        TOOL_CALL_ID = "tool_call_id",
        TOOL_NAME = "tool_name",
        PROVIDER_NAME = "provider_name",
        ARGS = "args",
        CONTENT = "content",
        METADATA = "metadata",
        OUTCOME = "outcome",
        IMAGES = "images",
        UNAVAILABLE = "unavailable",
        APPS = "apps",
        MESSAGE_ID = "message_id",
        INPUT_ID = "input_id",
        SOURCE = "source",
        CONTENT_DELTA = "content_delta",
        SIGNATURE_DELTA = "signature_delta",
        SIGNATURE = "signature",
        CITATIONS_DELTA = "citations_delta",
        PREVIOUS_PART_KIND = "previous_part_kind",
        NEXT_PART_KIND = "next_part_kind",
        TOOL_KIND = "tool_kind",
        ID = "id",
        CITATIONS = "citations",
        /// A Harness event's (or a capability event's) kind.
        KIND = "kind",
        CAPABILITY_ID = "capability_id",
        /// A model request's index, in a lifecycle payload.
        REQUEST_INDEX = "request_index",
        /// A custom event's name.
        NAME = "name",
        /// Where Pydantic AI's unknown event envelopes hold the payload of an event no class of theirs has.
        DATA = "data",
        /// An input's metadata: whether a display shows it, where it came from, whether it is media.
        DISPLAY = "display",
        SOURCE_ID = "source_id",
        MEDIA = "media",
    }

    /// The fields of an applied file edit, in the order the display keeps them.
    pub(crate) const EDIT_FIELDS: [&str; 3] = ["file_path", "before", "after"];

    /// A lifecycle payload's type when a model request starts.
    pub(crate) const MODEL_REQUEST_STARTED: &str = "model_request_started";
    /// A part delta event's `event_kind`.
    pub(crate) const PART_DELTA_EVENT: &str = "part_delta";
    /// A tool-call part delta's kind.
    pub(crate) const TOOL_CALL_DELTA: &str = "tool_call";
    /// A tool return part's kind.
    pub(crate) const TOOL_RETURN: &str = "tool-return";
    /// A builtin (provider-run) tool call part's kind.
    pub(crate) const BUILTIN_TOOL_CALL: &str = "builtin-tool-call";
    /// A builtin (provider-run) tool return part's kind.
    pub(crate) const BUILTIN_TOOL_RETURN: &str = "builtin-tool-return";
    /// A retry prompt part's kind.
    pub(crate) const RETRY_PROMPT: &str = "retry-prompt";
    /// A tool outcome that succeeded.
    pub(crate) const SUCCESS: &str = "success";
    /// A tool outcome that is retried.
    pub(crate) const RETRIED: &str = "retried";
    /// Tool outcomes that fail the call.
    pub(crate) const FAILING_OUTCOMES: [&str; 3] = ["failed", "denied", "interrupted"];
    /// Input sources a person authored.
    pub(crate) const AUTHORED_SOURCES: [&str; 2] = ["user", "steering"];
    /// The input source when an input names none.
    pub(crate) const DEFAULT_INPUT_SOURCE: &str = "user";
    /// The sources an input may name: the `Literal` of `InputTextEvent.source` and `InputMediaEvent.source`.
    pub(crate) const INPUT_SOURCES: [&str; 6] =
        ["user", "steering", "context", "recovery", "async_subagent", "background_process"];
    /// The capability and call fields of every capability event's envelope, in its dump's order, which its model
    /// holds as a string or `None`.
    pub(crate) const CAPABILITY_IDS: [&str; 3] = [CAPABILITY_ID, TOOL_CALL_ID, TOOL_NAME];
    /// The call fields of a custom event, which its model holds as a string or `None`.
    pub(crate) const CUSTOM_IDS: [&str; 2] = [TOOL_CALL_ID, TOOL_NAME];
}

/// The `event_kind`s of the Pydantic AI and Harness events a source line may carry that a rule names.
pub(crate) mod event_kind {
    pub(crate) const CAPABILITY: &str = "capability";
    pub(crate) const CUSTOM: &str = "custom";
    pub(crate) const ENQUEUED_MESSAGES: &str = "enqueued_messages";
    pub(crate) const DEFERRED_TOOL_RESULTS: &str = "deferred_tool_results";
    pub(crate) const PART_START: &str = "part_start";
    pub(crate) const PART_END: &str = "part_end";
    pub(crate) const PART_DELTA: &str = "part_delta";
    pub(crate) const FUNCTION_TOOL_RESULT: &str = "function_tool_result";
    pub(crate) const OUTPUT_TOOL_RESULT: &str = "output_tool_result";
}

/// Fields the display adds to an item's content, beside the event fields it copies.
pub(crate) mod item_key {
    pub(crate) const TEXT: &str = "text";
    pub(crate) const ARGUMENTS: &str = "arguments";
    pub(crate) const ARGUMENTS_COMPLETE: &str = "arguments_complete";
    pub(crate) const RESULT: &str = "result";
    pub(crate) const RESULT_PARTS: &str = "result_parts";
    pub(crate) const ENCRYPTED_VALUE: &str = "encrypted_value";
    pub(crate) const RESPONSE_GROUP: &str = "responseGroup";
    pub(crate) const MEMORY_SOURCES: &str = "memory_sources";
    pub(crate) const TRUNCATED: &str = "truncated";
    pub(crate) const OMITTED: &str = "omitted";
    pub(crate) const FAILURE: &str = "failure";
    /// A failure's code.
    pub(crate) const FAILURE_CODE: &str = "code";
    /// A failure's message.
    pub(crate) const FAILURE_MESSAGE: &str = "message";
    pub(crate) const INPUT_MEDIA: &str = "input_media";
    pub(crate) const INPUT_SOURCE: &str = "input_source";
    pub(crate) const INPUT_GROUP: &str = "input_group";
    pub(crate) const PROVIDER: &str = "provider";
    pub(crate) const OUTCOME: &str = "outcome";
    pub(crate) const RETRY: &str = "retry";
    pub(crate) const APPLIED_EDIT: &str = "applied_edit";
    pub(crate) const TOOL_IMAGES: &str = "tool_images";
    pub(crate) const TOOL_IMAGE_UNAVAILABLE: &str = "tool_image_unavailable";
    pub(crate) const MCP_APPS: &str = "mcp_apps";

    /// The scope of the root run's items and response groups (a child run's scope is its run id).
    pub(crate) const ROOT_SCOPE: &str = "root";
    /// The provider of a builtin tool's call when its part names none.
    pub(crate) const DEFAULT_PROVIDER: &str = "provider";
    /// A failed tool call's failure code.
    pub(crate) const TOOL_FAILED: &str = "tool_failed";
}

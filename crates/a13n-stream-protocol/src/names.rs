//! Every `a13n.*` name the library reads or writes: CUSTOM event names, metadata keys and the prefixes that
//! build the rest. AG-UI event types are [`EventType`](crate::agui::EventType).

/// Prefix of the CUSTOM events that carry a Pydantic AI event through (`a13n.pydantic_ai.<event_kind>`).
pub const PYDANTIC_AI_PREFIX: &str = "a13n.pydantic_ai.";
/// Prefix of the CUSTOM events that carry a Harness extension event through (`a13n.harness.<kind>`).
pub const HARNESS_PREFIX: &str = "a13n.harness.";
/// Prefix of the CUSTOM events of user, steering and other inputs (`a13n.input.<source>`).
pub const INPUT_PREFIX: &str = "a13n.input.";

/// A part's start, carried through.
pub const PART_START: &str = "a13n.pydantic_ai.part_start";
/// A part's delta, carried through (streamed tool arguments among them).
pub const PART_DELTA: &str = "a13n.pydantic_ai.part_delta";
/// A part's end, carried through.
pub const PART_END: &str = "a13n.pydantic_ai.part_end";
/// A function tool's result.
pub const FUNCTION_TOOL_RESULT: &str = "a13n.pydantic_ai.function_tool_result";
/// An output tool's result.
pub const OUTPUT_TOOL_RESULT: &str = "a13n.pydantic_ai.output_tool_result";
/// Messages enqueued into the run.
pub const ENQUEUED_MESSAGES: &str = "a13n.pydantic_ai.enqueued_messages";
/// Results of deferred tool calls.
pub const DEFERRED_TOOL_RESULTS: &str = "a13n.pydantic_ai.deferred_tool_results";

/// Harness lifecycle events (model requests, run start).
pub const HARNESS_LIFECYCLE: &str = "a13n.harness.lifecycle";
/// Harness delegation events (inline subagent runs started, completed or failed).
pub const HARNESS_DELEGATION: &str = "a13n.harness.delegation";
/// Harness usage reports (token counts of model requests).
pub const HARNESS_USAGE: &str = "a13n.harness.usage";
/// Harness context events (memory sources).
pub const HARNESS_CONTEXT: &str = "a13n.harness.context";
/// A Harness tool observation.
pub const HARNESS_TOOL: &str = "a13n.harness.tool";
/// Metadata key of a client-side tool.
pub const HARNESS_CLIENT_TOOL: &str = "a13n.harness.client-tool";

/// Text input.
pub const INPUT_TEXT: &str = "a13n.input.text";
/// Media input.
pub const INPUT_MEDIA: &str = "a13n.input.media";
/// The user's input.
pub const INPUT_USER: &str = "a13n.input.user";
/// Steering input.
pub const INPUT_STEERING: &str = "a13n.input.steering";

/// A handoff summary of the context.
pub const HANDOFF_SUMMARY: &str = "a13n.context.handoff_summary";
/// A compaction summary of the context.
pub const COMPACTION_SUMMARY: &str = "a13n.context.compaction_summary";

/// A file edit a tool applied.
pub const FILESYSTEM_EDIT_APPLIED: &str = "a13n.filesystem.edit_applied";
/// Images a tool produced.
pub const TOOL_IMAGES: &str = "a13n.tool_images";
/// Images a tool produced, for the Harness UI.
pub const HARNESS_UI_TOOL_IMAGES: &str = "a13n.harness-ui.tool_images";
/// MCP apps, for the Harness UI.
pub const HARNESS_UI_MCP_APPS: &str = "a13n.harness-ui.mcp_apps";
/// MCP apps.
pub const MCP_APPS: &str = "a13n.mcp_apps";

/// Metadata key of a tool result's content projection.
pub const TOOL_CONTENT_METADATA: &str = "a13n.tool-content";
/// The CUSTOM event that carries one fragment of a large event.
pub const STREAM_FRAGMENT: &str = "a13n.stream.fragment";

//! The fast lanes: shortcuts that take the commonest source lines (a content or argument delta of an open part, a
//! part's start or end, a tool's successful return, a line carried through whole) from the line's bytes to the
//! same state and output as the general path, without a JSON tree. Each lane's scan reads a line into borrowed
//! fields ([`lane_hint::scan_for_lane`] sends it to at most one), and the observer (`observer/lanes.rs`,
//! `observer/line.rs`) and the display fold (`display/lane.rs`, `display/carried.rs`) take what it read; a line
//! no lane takes, or that a lane declines, takes the general path, for a reason [`lane_counts`] counts.
//!
//! # How each lane keeps the general path's results
//!
//! Folding a content delta of an open part changes three things: the part cursor's `emitted_content`, the item's
//! text, and the fold's position; it writes one `*_MESSAGE_CONTENT` observed line. `fold_line` scans such a line
//! with `scan::Scanner` (no `Value` tree; unknown or repeated fields, non-integer numbers, lone surrogates and deep
//! nesting all send the line to the general path), checks every condition under which the general path would do
//! anything else (a processor or event journal on the observer, a part not open or of another kind, the
//! item sealed or missing, copied fields that would change), then appends the text with the same bounded append and
//! writes the line byte for byte as `Observed::write_json` would. After a success it remembers the part (`LaneHit`);
//! the next delta of the same part skips the checks, because only the general path can change their outcome, and
//! `events`, `fold` and `capture_delta` forget it.
//!
//! A content delta whose part has no cursor yet (the part had no start, as in an inline child's first line) opens it
//! in the same lane: the observer plans the part's start and content events and its cursor by the general path's
//! rule for a delta (`observer/parts.rs`, `content_delta`; `observer/lanes.rs`, `opening_delta_in_any_run`; a child
//! run not yet bound to a thread is bound by the plan, as the general path binds it), and the fold folds the typed
//! events through the general path's message fold.
//!
//! An argument delta of a tool-call part changes no conversion state: the observer carries the source item through
//! as one `CUSTOM` part-delta observation, and the fold appends its text to the held argument stream
//! (`display/arguments.rs`). The argument lane takes a delta when the part is open under the same call, the held
//! stream's last delta was the event just before, and the delta belongs to the same stream. It writes the
//! observation's copy of the source event from the scanned fields in its model's key order (the line's too: a lane
//! takes only a line in its model's layout), each value in
//! canonical form, so no tree is built. A stream's identity is the JSON text of its value (name, thread, run and the
//! event without its text) written canonically, so two identities are equal exactly when the streams are: the lane
//! compares identities, and the value's tree is built only when the held stream was opened on the general path or
//! restored (and for an export, from the text); the lane remembers the last identity it compared; each delta
//! writes its identity into the buffer the one before last used, so a run of deltas allocates none, and the item
//! grows in place and reports itself to the observed line by reference (`put_arguments` hands what it changed to the
//! caller, which writes it or, on the general path, keeps an owned copy). A delta that starts a stream, names
//! another call, carries a tool-name delta or any field the lane does not know takes the general path.
//! `tests/fold_lanes.rs`, `tests/observe_lanes.rs` and the `fold_lanes` fuzz target compare both lanes byte for byte
//! and state for state, including argument lines mutated in 28 ways and a child run's tool call.
//!
//! A line the observer carries through whole takes the carried lane (`lanes/carried_line.rs`, `display/carried.rs`)
//! when its `event` is canonical JSON (`Scanner::canonical_value`: compact, canonical string escapes, plain integers
//! of at most 18 digits, no floats, no repeated keys), it is at most 8 KiB with no DEL (so its observation,
//! ASCII-escaped, stays under the bound), and it is a lifecycle event other than the run's start, a usage report (no
//! rule reads its payload), a tool-call part's start, a function tool call of a plain tool-call part, or a tool
//! result the observer does not present whose projection leaves it as written (see below). The
//! observation's value is written once (the event copied as spelled: in its model's layout, a Harness event is
//! its schema version, kind and payload) and used for both the event and the item's sealed content (`Store::put_sealed`); the
//! lane then makes the general path's other changes: a model request's response group and request index, or the tool
//! call's cursor. Carried lines mutated in 33 ways (non-canonical spellings, floats, other kinds and types,
//! children) are compared in both lane tests.
//!
//! An inline delegation (a Harness `delegation` event whose payload's `type` is `inline_delegation`) takes the same
//! lane with one step more: the observer reads its payload and validates it with the general path's own
//! `validate_delegation` (`observer/lanes.rs`, `delegation_in_any_run`), then plans with the general path's own
//! `delegation_steps` what the general path makes of it before the observation: a completed child's closing events
//! (its open text and reasoning parts' ends, attributed to it; the display folds them as typed message events) and
//! the `SUBAGENT_STARTED` or `SUBAGENT_FINISHED` event, built by the same `subagent_event` as the general path (the
//! display seals it whole as one observation item). The commit opens or releases the child run's cursors. A failed
//! delegation and one without a child run take the general path. Delegations mutated in 26 ways (every rule of the
//! payload's model, the other action, nested parents, unknown children, non-canonical spellings, other runs) are
//! compared in both lane tests.
//!
//! A text or thinking part's start or end, or a tool-call part's end, takes the part lane (`lanes/part_line.rs`):
//! its scan reads the part into the same typed `PartBody` the general path reads from a decoded event, and the
//! observer converts it by the general path's own rules (`observer/parts.rs`, `part_boundary`), so the rules exist
//! once; a line they would reject takes the general path, which rejects it. The fold folds the typed events through
//! the general path's own message fold (`display/messages.rs`), so the display logic exists once too. Arguments
//! given as an object (written sorted by the general path) and a tool call's start (carried whole) take other paths.
//!
//! A line no lane took as spelled (not in its model's layout, or its lane's scan declined it) that has whitespace
//! beside its structural characters (`json.dumps` writes `", "` and `": "` by default) is tried once more without
//! that whitespace (`compact.rs`: only whitespace beside a structural character goes, so the compact line is the same
//! JSON, and an invalid line stays invalid); the general path reads both spellings alike, so a lane taking the
//! compact line keeps its results. The spaced lanes-equivalence tests fold every recorded stream in four spacings.
//! A line (compact now) still not in its model's layout, or whose scan declined it, is then written in that layout
//! (`source_model/laid_out.rs`: keys in the model's order, defaults written, keys the model drops left out, values
//! copied; nothing where a decoder could read it otherwise) and tried once more; a line spelled like one laid out
//! before, outside its values, is laid out by putting its values into that one's text (`laid_out_memo.rs`). The
//! laid-out lanes-equivalence tests fold every recorded stream with its keys reversed, sorted, sorted and spaced,
//! and with nulls left out, alone and read ahead (where the reader makes the other spelling).
//!
//! A tool's successful return (a `tool-return` part without metadata, outcome absent or `success`) takes the tool
//! return lane: only its content is parsed (a small tree, which the result conversion reads), the observer builds
//! the `TOOL_CALL_RESULT` it would, and the fold folds it through the same message fold. A result the observer does
//! not present (a retry prompt, or a failure, retry or denial with text content and null metadata) converts to a
//! `CUSTOM` event holding the source item as written, so the observer's carried lane copies it (the classification
//! calls the conversion's own `presents_tool_result`). The fold reads that event back from the copied bytes and folds
//! it with the general path's own steps (`observation`, then `failed_result` and `fail_tool_call`, which fail the
//! call's item), so no source tree is decoded and no event converted. Lowered results (their marker is in the
//! metadata) and every other result take the general path.
//!
//! A text input (a capability event of kind `a13n.input.text`: a user's message, steering, a context block) takes the
//! input lane (`lanes/input_line.rs`): its scan reads the fields the conversion reads (metadata as canonical JSON,
//! parsed into a small tree), and the observer converts them by the general path's own `input_event`
//! (`observer/custom.rs`, which a decoded item's fields reach the same way), so the rule exists once; the fold
//! folds the event through the general path's own fold of a converted item (`fold_observed`). An input its model
//! refuses is declined by the general path's own checks (`source::INPUT_SOURCES`, `CAPABILITY_IDS`, `metadata_error`),
//! and the general path refuses it. A child run's first line, which binds the run, takes the general path. Inputs
//! mutated in 34 ways are compared in both lane tests.
//!
//! The argument lane also opens a stream: the first delta of a call's arguments holds its observation whole. The
//! lane describes the observation once, as calls on a `sink::JsonSink`; the `Bytes` sink writes the observed line's
//! event and the `Tree` sink builds the held object from the same calls, so nothing is written and parsed back and
//! the two cannot drift. The held stream keeps the identity's text (`Held::Lane`). Later deltas only append
//! (`value.event.delta.args_delta` is found by comparing the few keys in order, not by hashing them).
//!
//! `DisplayFold::replay_line` folds a line for its state alone: every lane and the general path skip writing the
//! observed lines (a flag on the fold, set only for that call). Rebuilding a fold from a journal (the Python
//! package's `replay`, the CLI's `fold` without `--observed`, the host's rebuild from its journal) takes it; the
//! lanes-equivalence tests replay every stream beside the two lanes and compare results and checkpoints.
//!
//! A whole journal can be read on two threads: a lane's scan reads the line and the lanes' memos (`LaneMemos`: the
//! last argument delta read in full, the lines found in layout) and nothing of the fold or observer, so
//! `DisplayFold::read_ahead` (or `HarnessAguiStreamObserver::read_ahead`, or `ReadAhead::for_new_fold` for a fold
//! that has read no line) hands the memos out as a `ReadAhead` whose `scan` makes a `ScannedLine` on any thread, and
//! `DisplayFold::replay_scanned` / `fold_scanned_line` (or `observe_scanned`) take it as `replay_line` / `fold_line`
//! (or `observe_line`) take the line (`end_read_ahead` takes the memos back). The CLI's `observe` and `fold` read
//! their input this way (`crates/a13n-stream/src/read_ahead.rs`). A reader also makes an argument delta's stream
//! identity (`ArgsDelta::prepare`), which the lane then takes instead of making it; the general path's decode and
//! the opening delta's event stay with the fold, which keeps the two threads about equally busy on a real Harness
//! run. A memo names the lines it remembers by its own serial and a count, so a delta read by one memo never passes
//! for the last delta another read. The Python package's `replay` of 256 lines or more reads lines on a reader
//! thread kept between calls (a one-thread rayon pool, `in_place_scope`, so the reader borrows the lines) a batch of
//! 64 at a time while the calling thread folds (`crates/a13n-stream-py/src/replay.rs`); the lanes-equivalence tests
//! fold every stream read ahead beside the other lanes.

pub(crate) mod args_event;
pub(crate) mod carried_line;
pub(crate) mod compact;
pub(crate) mod delta_line;
pub(crate) mod delta_memo;
pub(crate) mod event_head;
pub(crate) mod input_line;
pub(crate) mod lane_counts;
pub(crate) mod lane_hint;
pub(crate) mod part_line;

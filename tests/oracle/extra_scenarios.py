"""Record reference behaviour the shared corpus does not exercise, into this repository's tests/cases.

usage (with the oracle built by ../shared/conformance/oracle/setup.sh):
    ~/.cache/a13n-oracle/venv/bin/python tests/oracle/extra_scenarios.py tests/cases

Each scenario is recorded with the shared oracle's own `record()`, so every expected file is the Python
reference's output. The scenarios target rules the generated corpus leaves untouched: terminal outcomes other
than completion, external deferred calls, tool supplements, floats, part identity edge cases, subagent
response groups, memory evidence and the observation size limits.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ORACLE = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "oracle"
sys.path.insert(0, str(ORACLE))

import gen  # noqa: E402  (the shared oracle's recorder)
import scenarios  # noqa: E402
from a13n_harness import HarnessEvent, HarnessRunResultEvent  # noqa: E402
from a13n_harness.events import InputMediaEvent, InputTextEvent  # noqa: E402
from a13n_harness.result import HarnessRunResult, SafeFailure  # noqa: E402
from a13n_harness.tools.deferred import DeferredToolCall, DeferredToolRequests  # noqa: E402
from a13n_harness.toolsets.events import FileEditAppliedEvent as EditApplied  # noqa: E402
from a13n_harness.toolsets.events import HandoffSummaryEvent  # noqa: E402
from a13n_harness.usage import RunUsageSummary  # noqa: E402
from pydantic_ai import CapabilityEvent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    DeferredToolResults,
    DeferredToolResultsEvent,
    EnqueuedMessagesEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ImageUrl,
    ModelRequest,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UserPromptPart,
)


@dataclass(kw_only=True)
class ToolImages(CapabilityEvent, namespace="a13n", name="tool_images"):
    images: list[dict[str, Any]] = field(default_factory=list)
    unavailable: bool = False


@dataclass(kw_only=True)
class McpApps(CapabilityEvent, namespace="a13n", name="mcp_apps"):
    apps: list[dict[str, Any]] = field(default_factory=list)


def usage(**counts: Any) -> RunUsageSummary:
    return RunUsageSummary(**counts)


def result_event(s: scenarios.Synth, result: HarnessRunResult, *, run_id: str | None = None) -> None:
    s.clock += timedelta(microseconds=777)
    s.items.append(
        HarnessRunResultEvent(
            thread_id=s.thread_id, run_id=run_id or s.run_id, sequence=s.sequence, occurred_at=s.clock, result=result
        )
    )
    s.sequence += 1


def terminal(status: str, **kw: Any) -> list[Any]:
    s = scenarios.Synth(thread_id="thread-t", run_id=f"run-{status}")
    s.ext("lifecycle", {"type": "run_started"})
    s.ext("lifecycle", {"type": "model_request_started", "request_id": "model-request-1", "request_index": 0, "message_count": 1})
    s.add(PartStartEvent(index=0, part=ThinkingPart(content="pondering")))
    s.add(PartStartEvent(index=1, part=TextPart(content="half an ans")))
    s.add(PartDeltaEvent(index=1, delta=TextPartDelta(content_delta="wer")))
    s.add(PartStartEvent(index=2, part=ToolCallPart(tool_name="t", args={"a": 1}, tool_call_id="tc-open")))
    result_event(s, HarnessRunResult(thread_id=s.thread_id, run_id=s.run_id, status=status, output=None, state=None, **kw))
    return s.items


def extra_terminals() -> dict[str, list[Any]]:
    failure = SafeFailure(code="model_error", message="The provider failed twice.", retry_hint="new_run")
    return {
        "extra-failed": terminal(
            "failed",
            usage=usage(input_tokens=10, output_tokens=5, cache_read_tokens=3, details={"reasoning_tokens": 4}),
            failure=failure,
        ),
        "extra-cancelled": terminal("cancelled", usage=usage(cache_write_tokens=7)),
        "extra-cancelled-no-usage": terminal("cancelled", usage=usage()),
    }


def from_real(items: list[Any], **changes: Any) -> list[Any]:
    """A real stream whose terminal result is rebuilt with other fields (same state and usage)."""
    last = items[-1]
    old = last.result
    result = HarnessRunResult(
        thread_id=old.thread_id,
        run_id=old.run_id,
        status=changes.pop("status", old.status),
        output=changes.pop("output", None),
        state=old.state,
        usage=old.usage,
        suspend_reason=changes.pop("suspend_reason", None),
        deferred=changes.pop("deferred", None),
    )
    return [*items[:-1], HarnessRunResultEvent(thread_id=last.thread_id, run_id=last.run_id, sequence=last.sequence,
                                               occurred_at=last.occurred_at, result=result)]


def extra_real(rng: Any) -> dict[str, list[Any]]:
    chat = scenarios.real_chat(rng, thinking=False, words=8)
    approval = scenarios.real_approval(rng)
    call = ToolCallPart(tool_name="browser_open", args={"url": "https://example.com", "zoom": 1.5}, tool_call_id="call_ext")
    model_call = ToolCallPart(tool_name="run_client_tool", args={"target": "browser_open"}, tool_call_id="call_model")
    plain = ToolCallPart(tool_name="plain_external", args='{"x": 1}', tool_call_id="call_plain")
    deferred = DeferredToolRequests(
        calls=[
            DeferredToolCall(model_call=model_call, target_call=call, target_identity="client/browser_open"),
            DeferredToolCall(model_call=plain, target_call=plain, target_identity="client/plain"),
        ],
        approvals=list(approval[-1].result.deferred.approvals),
        metadata={
            "call_ext": {"a13n.harness.client-tool": {"declared_name": "openBrowser"}, "ratio": 0.25},
            **approval[-1].result.deferred.metadata,
        },
    )
    return {
        "extra-output-omitted": from_real(chat, status="completed", output={1, 2}),
        "extra-output-null": from_real(chat, status="completed", output=None),
        "extra-output-structured": from_real(chat, status="completed", output={"n": 1.0, "small": 2.5e-06, "big": 1e17}),
        "extra-external": from_real(approval, status="suspended", suspend_reason="deferred", deferred=deferred),
    }


def extra_parts() -> list[Any]:
    s = scenarios.Synth(thread_id="thread-x", run_id="run-x")
    s.ext("lifecycle", {"type": "run_started"})
    s.ext("lifecycle", {"type": "model_request_started", "request_id": "model-request-1", "request_index": 0, "message_count": 1})
    s.ext("lifecycle", {"type": "model_retry_scheduled", "attempt": 2, "max_attempts": 3, "delay_seconds": 0.5})
    s.ext("state", {"type": "numbers", "values": [1e-05, 2.5e-07, 1e16, 1.5, -0.0, 123456789.125, 7]})
    s.add(PartStartEvent(index=0, part=TextPart(content="", id="msg-a")))
    s.add(PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="with id")))
    s.add(PartEndEvent(index=0, part=TextPart(content="with id", id="msg-a")))
    s.add(PartStartEvent(index=1, part=TextPart(content="x", id="msg-b")))
    # An end naming another identity is rejected; the part stays open.
    s.add(PartEndEvent(index=1, part=TextPart(content="x", id="msg-other")))
    s.add(PartEndEvent(index=1, part=TextPart(content="x", id="msg-b")))
    s.add(PartStartEvent(index=2, part=ThinkingPart(content="")))
    s.add(PartDeltaEvent(index=2, delta=ThinkingPartDelta(content_delta=None, signature_delta="s1")))
    s.add(PartDeltaEvent(index=2, delta=ThinkingPartDelta(content_delta=None, signature_delta=None)))
    s.add(PartDeltaEvent(index=2, delta=ThinkingPartDelta(content_delta="thought", signature_delta="s2")))
    s.add(PartEndEvent(index=2, part=ThinkingPart(content="thought", signature="s1s2")))
    # A new start at an open index replaces its cursor, whatever the kind.
    s.add(PartStartEvent(index=3, part=TextPart(content="first")))
    s.add(PartStartEvent(index=3, part=ThinkingPart(content="second")))
    s.add(PartEndEvent(index=3, part=ThinkingPart(content="second")))
    s.add(PartDeltaEvent(index=4, delta=ToolCallPartDelta(tool_name_delta="sea", args_delta=None, tool_call_id=None)))
    s.add(PartDeltaEvent(index=4, delta=ToolCallPartDelta(tool_name_delta="rch", args_delta='{"q": "r', tool_call_id=None)))
    s.add(PartDeltaEvent(index=4, delta=ToolCallPartDelta(args_delta='ust"}')))
    s.add(PartEndEvent(index=4, part=ToolCallPart(tool_name="search", args={"q": "rust", "w": 0.1}, tool_call_id="run-x:request-0:part-4:tool")))
    s.add(PartEndEvent(index=5, part=ToolCallPart(tool_name="noargs", args=None, tool_call_id="tc-none")))
    s.add(PartEndEvent(index=6, part=ToolCallPart(tool_name="emptyargs", args="", tool_call_id="tc-empty")))
    s.add(FunctionToolCallEvent(part=ToolCallPart(tool_name="search", args={"q": "rust"}, tool_call_id="run-x:request-0:part-4:tool")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(tool_name="search", content={"hits": [1.5, 2e-06], "ok": True}, tool_call_id="run-x:request-0:part-4:tool")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(content="try again with q", tool_name="noargs", tool_call_id="tc-none", outcome="retried")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(content=[{"type": "missing", "loc": ["q"], "msg": "Field required", "input": {}}], tool_name="emptyargs", tool_call_id="tc-empty", outcome="interrupted")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(tool_name="lowered", content=["model text", {"value": 42, "note": "é"}], metadata={"a13n.tool-content": {"result_index": 1}}, tool_call_id="tc-lowered")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(tool_name="denied", content={"img": ImageUrl(url="https://example.com/x.jpg"), "why": "policy"}, tool_call_id="tc-denied", outcome="denied")))
    s.add(OutputToolResultEvent(part=ToolReturnPart(tool_name="final_result", content="bad output", tool_call_id="tc-out", outcome="failed")))
    s.add(FunctionToolResultEvent(part=ToolReturnPart(tool_name="pics", content=[ImageUrl(url="file:///tmp/a.png"), ImageUrl(url="https://example.com/v.mp4"), "done"], tool_call_id="tc-pics")))
    s.add(DeferredToolResultsEvent(results=DeferredToolResults(calls={"c1": {"ok": 1}, "c2": "x"}, approvals={"a1": True})))
    s.add(EnqueuedMessagesEvent(enqueue_id="enq-1", messages=(ModelRequest(parts=[UserPromptPart(content="steer left")]),)))
    s.add(InputTextEvent(input_id="enq-1", source="steering", content="steer left"))
    s.add(InputMediaEvent(input_id="in-9", source="context", content={"kind": "image-url", "url": "https://example.com/c.png"}))
    s.add(PartStartEvent(index=7, part=NativeToolCallPart(tool_name="code", args='{"src": "1+1"}', tool_call_id="nc-1", provider_name=None)))
    s.add(PartStartEvent(index=8, part=NativeToolReturnPart(tool_name="code", content={"stdout": "2"}, tool_call_id="nc-1", provider_name=None)))
    s.add(ToolImages(tool_call_id="tc-pics", images=[{"url": "https://example.com/a.png"}], unavailable=False))
    s.add(EditApplied(tool_call_id="tc-edit", file_path="a.py", before="x = 1", after="x = 2"))
    s.add(McpApps(tool_call_id="tc-edit", apps=[{"name": "viewer"}]))
    s.add(PartStartEvent(index=9, part=TextPart(content="never ended")))
    s.ext("lifecycle", {"type": "model_request_started", "request_id": "model-request-2", "request_index": 1, "message_count": 3})
    s.add(PartDeltaEvent(index=0, delta=TextPartDelta(content_delta="next request")))
    return s.items


def extra_subagent_groups() -> list[Any]:
    s = scenarios.Synth(thread_id="thread-p", run_id="run-root")
    s.ext("lifecycle", {"type": "run_started"})
    s.ext("lifecycle", {"type": "model_request_started", "request_id": "model-request-1", "request_index": 0, "message_count": 1})
    s.ext("context", {"type": "memory_recall", "memories": [{"memory": "notes", "recall": "recalled", "records": [{"id": "r1", "sha256": "aa"}]}]})
    s.ext("context", {"type": "memory_recall", "memories": [{"memory": "notes2", "recall": "failed"}]})
    s.ext("context", {"type": "memory_context", "memories": [{"memory": "files", "context": "bogus"}]})
    base = {"type": "inline_delegation", "child_instance_id": "inst-1", "subagent": "helper", "status": "running",
            "parent_run_id": "run-root", "parent_agent_instance_id": "agent-0"}
    s.ext("delegation", {**base, "invocation_id": "delegation-1", "action": "started", "parent_tool_call_id": "call-d1", "child_run_id": "run-kid"})
    kid = {"run_id": "run-kid", "thread_id": "thread-k"}
    s.ext("lifecycle", {"type": "run_started"}, **kid)
    s.ext("lifecycle", {"type": "model_request_started", "request_id": "model-request-1", "request_index": 0, "message_count": 1}, **kid)
    s.ext("context", {"type": "memory_context", "memories": [{"memory": "kidfiles", "context": "unchanged", "files": []}]}, **kid)
    s.add(InputTextEvent(input_id="k-in", source="user", content="do the thing"), **kid)
    s.add(PartStartEvent(index=0, part=TextPart(content="kid text")), **kid)
    s.add(PartEndEvent(index=0, part=TextPart(content="kid text")), **kid)
    s.add(PartEndEvent(index=1, part=ToolCallPart(tool_name="kidtool", args={}, tool_call_id="k-call")), **kid)
    s.add(FunctionToolResultEvent(part=ToolReturnPart(tool_name="kidtool", content="boom", tool_call_id="k-call", outcome="failed")), **kid)
    s.add(PartStartEvent(index=2, part=ThinkingPart(content="kid open thought")), **kid)
    s.ext("tool", {"type": "tool_extra", "tool_call_id": "k-call", "tool_name": "kidtool", "tool_id": "x", "name": "Bad Name", "value": 1}, **kid)
    s.ext("tool", {"tool_call_id": "k-call", "tool_name": "kidtool", "tool_id": "x", "name": "kid.note", "value": {"n": 2.0}}, **kid)
    s.ext("delegation", {**base, "invocation_id": "delegation-1", "action": "completed", "status": "completed", "parent_tool_call_id": "call-d1", "child_run_id": "run-kid"})
    s.add(PartStartEvent(index=0, part=TextPart(content="root answer")))
    s.add(PartEndEvent(index=0, part=TextPart(content="root answer")))
    s.ext("delegation", {**base, "invocation_id": "bad id", "action": "started", "child_run_id": "run-z"})
    return s.items


def extra_large_args(size: int) -> list[Any]:
    s = scenarios.Synth(thread_id="thread-l", run_id="run-l")
    s.ext("lifecycle", {"type": "run_started"})
    s.add(PartStartEvent(index=0, part=ToolCallPart(tool_name="write", args="", tool_call_id="w-1")))
    chunk = "é\"\\x" * 500
    for _ in range(size):
        s.add(PartDeltaEvent(index=0, delta=ToolCallPartDelta(args_delta=chunk, tool_call_id="w-1")))
    s.add(PartDeltaEvent(index=0, delta=ToolCallPartDelta(args_delta="end", tool_call_id="w-other")))
    s.add(PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta="{}", tool_call_id="w-2")))
    s.add(PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta="{}", tool_call_id="w-2")))
    s.add(HandoffSummaryEvent(operation_id="handoff-1", summary="s" * 40_000, files=("a.md",)))
    s.add(PartEndEvent(index=1, part=ToolCallPart(tool_name="write", args="{}{}", tool_call_id="w-2")))
    return s.items


def main() -> None:
    out = Path(sys.argv[1])
    import random

    rng = random.Random(2026)
    cases: dict[str, tuple[list[Any], dict[str, Any]]] = {}
    for name, items in extra_terminals().items():
        cases[name] = (items, {})
    for name, items in extra_real(rng).items():
        cases[name] = (items, {})
    parts = extra_parts()
    cases["extra-parts"] = (parts, {})
    cases["extra-parts-full"] = (parts, {"full_content": True})
    groups = extra_subagent_groups()
    cases["extra-subagent-groups"] = (groups, {})
    cases["extra-subagent-groups-redact"] = (groups, {"processor": "redact_text"})
    large = extra_large_args(30)
    cases["extra-large-args"] = (large, {})
    cases["extra-large-args-retain"] = (large, {"retain_content": True})
    cases["extra-large-args-full"] = (large, {"full_content": True})
    for name, (items, options) in cases.items():
        print("case", name, file=sys.stderr)
        shutil.rmtree(out / name, ignore_errors=True)  # no cut of an earlier recording left behind
        gen.record(out / name, items, **options)


if __name__ == "__main__":
    main()

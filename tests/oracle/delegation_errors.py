"""Record the reference's validation messages for malformed inline delegation payloads.

usage: ~/.cache/a13n-oracle/venv/bin/python tests/oracle/delegation_errors.py \
    > crates/a13n-stream-protocol/tests/data/delegation_errors.jsonl

Each output line is {"payload": ..., "error": {"type": ..., "message": ...}} or {"payload": ..., "ok": true}.
"""

import json
import sys

from pydantic import ValidationError

from a13n_harness.events import InlineDelegationPayload

GOOD = {
    "type": "inline_delegation",
    "invocation_id": "delegation-1",
    "action": "started",
    "child_instance_id": "child-1",
    "subagent": "researcher",
    "status": "running",
    "parent_run_id": "run-parent",
    "parent_agent_instance_id": "agent-1",
    "parent_tool_call_id": None,
    "child_run_id": "run-child",
}


def variants():
    yield dict(GOOD)
    yield {**GOOD, "invocation_id": "bad id"}
    yield {**GOOD, "invocation_id": "delegation-" + "x" * 130}
    yield {**GOOD, "invocation_id": ""}
    yield {**GOOD, "invocation_id": 7}
    yield {**GOOD, "action": "paused"}
    yield {**GOOD, "action": 3}
    yield {**GOOD, "child_instance_id": ""}
    yield {**GOOD, "subagent": "s" * 129}
    yield {**GOOD, "status": None}
    yield {**GOOD, "parent_run_id": "r" * 300}
    yield {**GOOD, "parent_tool_call_id": ""}
    yield {**GOOD, "child_run_id": None}
    yield {**GOOD, "child_run_id": None, "action": "failed"}
    yield {**GOOD, "child_run_id": ""}
    yield {**GOOD, "extra": 1}
    yield {**GOOD, "extra": "x", "another": [1, 2]}
    yield {k: v for k, v in GOOD.items() if k != "subagent"}
    yield {k: v for k, v in GOOD.items() if k not in ("subagent", "status")}
    yield {**GOOD, "invocation_id": "bad id", "action": "x", "status": ""}
    yield {**GOOD, "subagent": "naïve ✓ 'quoted' \"double\"\n"}
    yield {**GOOD, "subagent": "é" * 129}
    yield {**GOOD, "status": 1.5}
    yield {**GOOD, "status": True}
    yield {**GOOD, "status": {"a": 1}}
    yield {**GOOD, "status": [1, "two"]}
    yield {**GOOD, "parent_tool_call_id": 5}
    yield {"zzz": 1, **GOOD, "status": ""}
    yield {**GOOD, "child_run_id": None, "extra": 2}
    yield {"type": "inline_delegation"}
    yield {**GOOD, "subagent": "quote ' only"}
    yield {**GOOD, "subagent": "\u00a0\u200b\ufeff\x7f"}


for payload in variants():
    try:
        InlineDelegationPayload.model_validate(payload)
        line = {"payload": payload, "ok": True}
    except ValidationError as error:
        line = {"payload": payload, "error": {"type": type(error).__name__, "message": str(error)}}
    sys.stdout.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")

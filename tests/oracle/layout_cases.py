"""Record the reference on journal lines laid out unlike the writers' own: the model decides the layout.

usage (with a13n-harness==0.21.0 and the reference under Python 3.13):
    python tests/oracle/layout_cases.py tests/cases [SEED [STREAM ...]]

The reference consumes native objects, so a line's key order, omitted defaults, unknown keys, whitespace,
escapes and its `occurred_at` spelling do not reach its output. For each shared corpus stream named below this
writes a case whose `source.jsonl` is that stream re-spelled line by line (a seeded mix of the spellings in
`SPELLINGS`), with large and negative-zero integers added to extension payloads and tool results; the expected
files are the reference's output on the native objects those lines load into (`load_item`), recorded with the
shared oracle's own `record()`.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

ORACLE = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "oracle"
sys.path.insert(0, str(ORACLE))

import gen  # noqa: E402  (the shared oracle's recorder)
import pydantic_ai.messages as messages  # noqa: E402
from a13n_harness import HarnessEvent, HarnessExtensionEvent, HarnessRunResultEvent  # noqa: E402
from a13n_harness.result import HarnessRunResult, SafeFailure  # noqa: E402
from a13n_harness.tools.deferred import DeferredToolRequests  # noqa: E402
from harness_json import dump_source  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

CORPUS = ORACLE.parent / "cases"
STREAMS = ["real-tools", "real-chat-thinking", "real-subagent", "real-multimodal", "real-approval",
           "synth-edge-parts", "synth-observations", "synth-subagents", "real-tools-retry", "real-model-error"]


@lru_cache(None)
def adapter(t: Any) -> TypeAdapter:
    return TypeAdapter(t)


# ----------------------------------------------------------------------------- loading a line, as a host would


def load_event(event: dict) -> Any:
    if "event_kind" not in event:
        return HarnessExtensionEvent.model_validate(event)
    return adapter(messages.AgentStreamEvent).validate_python(event)


class Result(HarnessRunResult):
    """A Run result as loaded from its journal form: what the reference reads of one (status, output, usage,
    failure, deferred), without the Run state a live result holds."""

    __slots__ = ("loaded",)

    status = property(lambda self: self.loaded.status)  # type: ignore[assignment]
    usage = property(lambda self: self.loaded.usage)  # type: ignore[assignment]
    failure = property(lambda self: self.loaded.failure)  # type: ignore[assignment]
    deferred = property(lambda self: self.loaded.deferred)  # type: ignore[assignment]

    def output_json(self) -> Any:
        if self.loaded.omitted:
            raise TypeError("output omitted")
        return self.loaded.output


def load_result(item: dict) -> Result:
    result, usage = item["result"], item["result"]["usage"]
    loaded = Result.__new__(Result)
    loaded._thread_id, loaded._run_id = item["thread_id"], item["run_id"]
    loaded.loaded = SimpleNamespace(
        status=result["status"],
        output=result.get("output"),
        omitted=result.get("output_omitted", False),
        usage=SimpleNamespace(**{k: usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                      "cache_write_tokens")}, details=dict(usage["details"])),
        failure=SafeFailure.model_validate(result["failure"]) if result.get("failure") else None,
        deferred=adapter(DeferredToolRequests).validate_python(result["deferred"]) if result.get("deferred") else None,
    )
    return loaded


def load_item(line: str) -> Any:
    item = json.loads(line)
    common = dict(thread_id=item["thread_id"], run_id=item["run_id"], sequence=item["sequence"],
                  occurred_at=datetime.fromisoformat(item["occurred_at"]))
    if "result" in item:
        return HarnessRunResultEvent(**common, result=load_result(item))
    return HarnessEvent(**common, event=load_event(item["event"]))


def record_lines(case: Path, lines: list[str]) -> None:
    """Record the reference on journal `lines` as spelled (loaded by `load_item`) into the case directory `case`,
    emptied first: the recorder writes the cuts it takes, and a cut an earlier recording took would stay behind."""
    shutil.rmtree(case, ignore_errors=True)
    gen.record(case, [load_item(line) for line in lines])
    (case / "source.jsonl").write_text("".join(line + "\n" for line in lines))


# ----------------------------------------------------------------------------- spellings of one line


def reverse_all(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: reverse_all(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [reverse_all(v) for v in value]
    return value


def kind_first(item: dict) -> dict:
    event = item["event"]
    key = "event_kind" if "event_kind" in event else "kind"
    item["event"] = {key: event[key], **{k: v for k, v in event.items() if k != key}}
    return item


def without_defaults(item: dict) -> dict:
    """Every key whose removal loads into the same dump (a default), removed, at any depth of the event."""
    original = json.dumps(dump_source(load_item(json.dumps(item))))

    def prune(holder: Any) -> None:
        children = holder.values() if isinstance(holder, dict) else holder if isinstance(holder, list) else []
        for child in list(children):
            prune(child)
        if isinstance(holder, dict):
            for key in list(holder):
                value = holder.pop(key)
                try:
                    same = json.dumps(dump_source(load_item(json.dumps(item)))) == original
                except Exception:  # noqa: BLE001 - a required key
                    same = False
                if not same:
                    holder[key] = value

    prune(item["event"])
    return item


def unknown_keys(item: dict) -> dict:
    """An unknown key added to every object of the event the model ignores (the load must not change)."""
    original = json.dumps(dump_source(load_item(json.dumps(item))))

    def add(holder: Any) -> None:
        if isinstance(holder, dict):
            for child in list(holder.values()):
                add(child)
            holder["x_unknown"] = {"n": [1, 2]}
            try:
                same = json.dumps(dump_source(load_item(json.dumps(item)))) == original
            except Exception:  # noqa: BLE001 - a model that forbids extra keys
                same = False
            if not same:
                del holder["x_unknown"]
        elif isinstance(holder, list):
            for child in holder:
                add(child)

    add(item["event"])
    return item


def other_time(item: dict, rng: random.Random) -> dict:
    when = datetime.fromisoformat(item["occurred_at"])
    layouts = [
        lambda: when.strftime("%Y%m%dT%H%M%S") + (f".{when.microsecond:06d}" if when.microsecond else "")
        + when.strftime("%z"),
        lambda: when.isoformat(sep=" "),
        lambda: when.strftime("%Y%m%dT%H%M%S.%f") + "Z",
        lambda: when.strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00",
        lambda: when.isoformat(timespec="milliseconds"),
    ]
    item["occurred_at"] = rng.choice(layouts)()
    return item


def big_numbers(item: dict) -> dict:
    event = item.get("event", {})
    payload = event.get("payload")
    if isinstance(payload, dict) and event.get("kind") in ("usage", "diagnostic"):
        payload["x_big"] = 18446744073709551616
        payload["x_negative_big"] = -99999999999999999999999
        payload["x_zero"] = "-0 below"
    result = event.get("result") if isinstance(event.get("result"), dict) else None
    if result is not None and isinstance(result.get("content"), dict):
        result["content"]["x_big"] = 123456789012345678901234567890
    return item


SPELLINGS: dict[str, Callable[[dict, random.Random], dict]] = {
    "reversed": lambda item, rng: reverse_all(item),
    "kind-first": lambda item, rng: kind_first(item),
    "no-defaults": lambda item, rng: without_defaults(item),
    "unknown-keys": lambda item, rng: unknown_keys(item),
    "time": other_time,
    "numbers": lambda item, rng: big_numbers(item),
}


def spell(line: str, rng: random.Random) -> str:
    item = json.loads(line)
    if "event" in item:
        for name in rng.sample(sorted(SPELLINGS), rng.randint(1, 3)):
            item = SPELLINGS[name](item, rng)
    else:
        item = reverse_all(item) if rng.random() < 0.5 else item
        item = other_time(item, rng) if rng.random() < 0.5 else item
    style = rng.random()
    text = (json.dumps(item, ensure_ascii=False, separators=(",", ":")) if style < 0.5
            else json.dumps(item) if style < 0.8 else json.dumps(item, ensure_ascii=True, indent=None,
                                                                 separators=(", ", ": ")).replace("/", "\\/"))
    # JSON allows `-0`; Python reads it as the integer 0. Written here so json.dumps cannot normalise it.
    return text.replace('"-0 below"', "-0")


def main() -> None:
    out = Path(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261202)
    for name in sys.argv[3:] or STREAMS:
        # Split at newlines alone: `splitlines()` also splits at U+2028 and other separators a JSON string may hold.
        lines = [line for line in (CORPUS / name / "source.jsonl").read_text().split("\n") if line]
        spelled = [spell(line, rng) for line in lines]
        case = out / f"layout-{name}"
        print("case", case.name, file=sys.stderr)
        record_lines(case, spelled)


if __name__ == "__main__":
    main()

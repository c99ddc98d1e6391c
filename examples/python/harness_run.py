"""A real, offline `a13n-harness` run: the native stream items a Python host of Harness runs receives.

`real_run()` builds an agent with `HarnessBuilder` whose model is Pydantic AI's `FunctionModel` driven by a
`stream_function` (no provider, no network), runs it with `executable.stream(prompt)` and returns every item the
stream yields: `HarnessEvent`s, then the terminal `HarnessRunResultEvent`. The run has

- a reasoning (thinking) part streamed in deltas at the start of every model turn,
- `tool_rounds` model turns that each call one to three tools, the JSON arguments of every call streamed in
  several deltas,
- a tool that fails: `flaky` raises `ModelRetry` (a retry prompt) for a non-positive argument, which the first
  round and every third round after it ask for, and `lookup` raises `ToolFailed` (a failed outcome) for the
  topic "forbidden", which the second round and every fifth round after it ask for,
- a last turn that streams the answer of `words` words as text.

Content is deterministic for a seed (the model's deltas, the tools' arguments and results); the Harness's own ids
and clock are not (`run_id`, `thread_id`, `occurred_at` and the ids derived from them differ on every run).

Sizes (`len(real_run(...))` with harness 0.21.0, for seeds 0 and 1; the run time includes the Harness's work):

    real_run()                              # tool_rounds=3, words=60: 282 / 307 items, under 1 s
    real_run(tool_rounds=10, words=100)     # 726 / 681 items
    real_run(tool_rounds=40, words=400)     # 2,762 / 2,723 items, about 4 s
    real_run(tool_rounds=100, words=1000)   # 6,895 / 6,950 items, about 12 s

Run as a script, it writes the run as JSON lines on stdout in the journal wire form (one source line per item, what
`a13n-stream observe`, `fold` and `serve` read):

    python examples/python/harness_run.py [SEED] [TOOL_ROUNDS] [WORDS] > run.jsonl
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, Optional, Union

from a13n_harness.builder import HarnessBuilder
from a13n_harness.spec import AgentSpec
from pydantic_ai import ModelRetry, ToolFailed
from pydantic_ai.capabilities import Toolset
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)
from pydantic_ai.toolsets import FunctionToolset

__all__ = ["real_run", "source_line"]

_WORDS = (
    "the agent streams tokens while a host persists every observation and a viewer reconnects after a crash "
    "résumé naïve 東京 emoji 🚀 quotes \" backslash \\ tab\t newline\n done"
).split(" ")
_CITIES = ("Paris", "東京", "Lagos", "Lima", "Oslo")
_TOPICS = ("weather", "tides", "trains", "forbidden", "markets", "rivers")

_Delta = Union[str, DeltaToolCalls, DeltaThinkingCalls]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _chunks(rng: random.Random, text: str, max_len: int) -> list[str]:
    """`text` cut into pieces of 1 to `max_len` characters."""
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(1, max_len)
        out.append(text[i : i + n])
        i += n
    return out


def _turn(messages: list[ModelMessage]) -> int:
    """How many model responses the history already has: the index of the turn being asked for."""
    return sum(1 for message in messages if isinstance(message, ModelResponse))


def _plan(rng: random.Random, round_index: int) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of one round: one to three, with the failing ones on a fixed schedule."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(("get_weather", "search", "lookup"))
        if name == "get_weather":
            calls.append((name, {"city": rng.choice(_CITIES), "days": rng.randint(1, 7)}))
        elif name == "search":
            calls.append((name, {"query": _sentence(rng, rng.randint(2, 6)), "limit": rng.randint(1, 20)}))
        else:
            calls.append((name, {"topic": rng.choice([t for t in _TOPICS if t != "forbidden"])}))
    if round_index % 3 == 0:
        calls.append(("flaky", {"x": 0 if round_index % 2 == 0 else -round_index}))
    else:
        calls.append(("flaky", {"x": round_index}))
    if round_index % 5 == 1:
        calls.append(("lookup", {"topic": "forbidden"}))
    return calls


def _toolset(seed: int) -> FunctionToolset[Any]:
    # Sequential: the calls of a round run one after another, so their results arrive in call order on every run
    # (in parallel they arrive in completion order). Each result comes from its arguments alone (a Random seeded by
    # them), never from a shared generator.
    tools: FunctionToolset[Any] = FunctionToolset(sequential=True)

    def local(*key: object) -> random.Random:
        return random.Random(json.dumps([seed, *key], ensure_ascii=False))

    async def get_weather(city: str, days: int = 1) -> dict[str, Any]:
        """The forecast for a city."""
        rng = local("get_weather", city, days)
        return {"city": city, "daily": [{"day": d, "celsius": rng.randint(-5, 35)} for d in range(days)]}

    async def search(query: str, limit: int = 5) -> str:
        """Search the web."""
        rng = local("search", query, limit)
        return _sentence(rng, rng.randint(3, 3 + limit))

    async def lookup(topic: str) -> list[str]:
        """Look a topic up in the knowledge base."""
        if topic == "forbidden":
            raise ToolFailed(f"the knowledge base refused topic {topic!r}")
        rng = local("lookup", topic)
        return [_sentence(rng, 4) for _ in range(rng.randint(1, 4))]

    async def flaky(x: int) -> str:
        """Works for a positive x only."""
        if x <= 0:
            raise ModelRetry(f"x must be positive, got {x}")
        return f"ok {x}"

    for tool in (get_weather, search, lookup, flaky):
        tools.add_function(tool)
    return tools


def _stream_function(
    rng: random.Random, tool_rounds: int, words: int
) -> Callable[[list[ModelMessage], AgentInfo], AsyncIterator[_Delta]]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[_Delta]:
        turn = _turn(messages)
        for piece in _chunks(rng, _sentence(rng, rng.randint(4, 16)), 6):
            yield {0: DeltaThinkingPart(content=piece)}
        if turn < tool_rounds:
            for index, (name, args) in enumerate(_plan(rng, turn), start=1):
                pieces = _chunks(rng, json.dumps(args, ensure_ascii=False), 8)
                call_id = f"call_{turn}_{index}"
                yield {index: DeltaToolCall(name=name, json_args=pieces[0], tool_call_id=call_id)}
                for piece in pieces[1:]:
                    yield {index: DeltaToolCall(json_args=piece)}
        else:
            for piece in _chunks(rng, _sentence(rng, words), 5):
                yield piece

    return stream


async def _collect(seed: int, tool_rounds: int, words: int) -> list[Any]:
    rng = random.Random(seed)
    executable = HarnessBuilder().build(
        AgentSpec(system_prompt="Use the tools, then answer."),
        output_type=str,
        model=FunctionModel(stream_function=_stream_function(rng, tool_rounds, words)),
        capabilities=[Toolset(_toolset(seed))],
    )
    items: list[Any] = []
    async with executable.stream(_sentence(rng, 8)) as stream:
        async for item in stream:
            items.append(item)
    return items


def real_run(seed: int = 0, *, tool_rounds: int = 3, words: int = 60) -> list[Any]:
    """The native stream items of one real offline Harness run (see the module docstring for what it holds).

    Every item is a `HarnessEvent`, except the last, the run's `HarnessRunResultEvent`.
    """
    if tool_rounds < 0 or words < 1:
        raise ValueError("tool_rounds must be >= 0 and words >= 1")
    return asyncio.run(_collect(seed, tool_rounds, words))


# ---------------------------------------------------------------- the journal wire form

_to_source_line: Optional[Callable[[Any], str]]
try:
    from a13n_stream_rs import to_source_line as _imported

    _to_source_line = _imported
except ImportError:  # the package is not installed: real_run() still works, main() says what is missing
    _to_source_line = None


def source_line(item: Any) -> str:
    """One native stream item as its journal line (`a13n_stream_rs.to_source_line`)."""
    if _to_source_line is None:
        raise SystemExit("writing journal lines needs the a13n_stream_rs package: pip install ./python")
    return _to_source_line(item)


def main(argv: list[str]) -> int:
    if len(argv) > 3 or not all(arg.isdigit() for arg in argv):
        print("usage: harness_run.py [SEED] [TOOL_ROUNDS] [WORDS]", file=sys.stderr)
        return 2
    seed, tool_rounds, words = (int(arg) for arg in argv + ["0", "3", "60"][len(argv) :])
    out = sys.stdout
    try:
        for item in real_run(seed, tool_rounds=tool_rounds, words=words):
            out.write(source_line(item))
            out.write("\n")
        out.flush()
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of this program
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second failure flushing at exit
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

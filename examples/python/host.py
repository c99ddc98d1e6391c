"""A Python host of Harness runs, end to end: a real run, the live display loop, durable ingest into `serve`.

It does what a product's host does with a run:

1. runs a real offline Harness run (`harness_run.real_run`) and, for every native stream item, the product page's
   live loop: `observed = fold.fold(fold.events(source), source)` (each `Observed` is one AG-UI event at its
   sequence, with the display item it changed, what a live page is sent);
2. journals the run in a running `a13n-stream serve`: the source lines (`to_source_line(source)`) posted in
   batches to `POST /v1/runs/{run_id}/source?offset=N`, `N` the journal position of the batch's first line,
   with the retries the host documents: a connection error or `503` retries the same batch with backoff (an
   exact retry of committed lines is acknowledged as `"duplicate": true`, so a lost answer is harmless); a `409`
   `offset` conflict `behind` (or `ahead`: this host still holds the missing lines) resends from
   `expected_offset`; `different_content` and every other refusal are fatal;
3. shows both retries on purpose: the first batch is posted twice (the second answer must be `duplicate`), and
   the next batch starts in the middle of the first (the answer must be `409 behind` at the journal's end);
4. reads the host's committed display back (`GET /v1/runs/{run_id}/snapshot`) and compares it with the local
   fold's checkpoint, `fold.export().model_dump_json()`: byte for byte equal, or exit status 1.

    a13n-stream serve --db /tmp/runs.db &
    python examples/python/host.py --serve http://127.0.0.1:8787 --run-seed 3 --batch 50

With `A13N_STREAM_TOKEN` set, requests carry `Authorization: Bearer $A13N_STREAM_TOKEN`. Standard library only
for HTTP. `run.sh` beside this file starts a `serve` on a free port and runs this against it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from a13n_stream_rs import to_source_line
from a13n_stream_rs.display import DisplayFold, Observed

from harness_run import real_run

NDJSON = "application/x-ndjson"


class HostError(Exception):
    """The host refused a request for good, or could not be reached within the attempts allowed."""


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def error(self) -> dict[str, Any]:
        """The `{"error": {...}}` body of a refusal (empty when the body is not one)."""
        try:
            value = self.json()
        except ValueError:
            return {}
        error = value.get("error") if isinstance(value, dict) else None
        return error if isinstance(error, dict) else {}


class Client:
    """HTTP to one `a13n-stream serve`; a connection error or `503` is retried with backoff, boundedly."""

    def __init__(self, base: str, *, token: Optional[str] = None, attempts: int = 8, timeout: float = 30.0) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.attempts = attempts
        self.timeout = timeout
        self.retries = 0
        # No proxy: the host is addressed directly (loopback, usually), whatever *_proxy the environment sets.
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def request(
        self, method: str, path: str, body: Optional[bytes] = None, content_type: Optional[str] = None
    ) -> Reply:
        headers = {"Accept": "application/json"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(1, self.attempts + 1):
            request = urllib.request.Request(self.base + path, data=body, headers=headers, method=method)
            delay = min(0.05 * 2**attempt, 2.0)
            try:
                with self.opener.open(request, timeout=self.timeout) as response:
                    return Reply(response.status, response.read())
            except urllib.error.HTTPError as refusal:
                reply = Reply(refusal.code, refusal.read())
                if refusal.code != 503 or attempt == self.attempts:
                    return reply
                # Busy (too many ingest bytes in flight, too many connections) or storage: the same request later.
                retry_after = refusal.headers.get("Retry-After")
                if retry_after is not None and retry_after.strip().isdigit():
                    delay = max(delay, float(retry_after))
                problem = f"503 {reply.error().get('code', '')}".strip()
            except (OSError, http.client.HTTPException) as failure:
                # Refused, reset, timed out: the request may or may not have been committed. Sending it again is
                # safe, since a batch at an offset already committed is acknowledged as a duplicate.
                if attempt == self.attempts:
                    raise HostError(f"{method} {path}: no answer after {attempt} attempts: {failure}") from failure
                problem = type(failure).__name__
            self.retries += 1
            print(f"  retry {attempt}/{self.attempts - 1} of {method} {path.split('?')[0]} in {delay:.2f}s ({problem})")
            time.sleep(delay)
        raise AssertionError("unreachable")

    def post_source(self, run_id: str, offset: int, lines: Sequence[str]) -> Reply:
        path = f"/v1/runs/{urllib.parse.quote(run_id, safe='')}/source?offset={offset}"
        return self.request("POST", path, "\n".join(lines).encode("utf-8"), NDJSON)

    def snapshot(self, run_id: str) -> Reply:
        return self.request("GET", f"/v1/runs/{urllib.parse.quote(run_id, safe='')}/snapshot")


@dataclass
class Ingest:
    """What the host acknowledged: the journal's length, the AG-UI events it produced, the retries shown."""

    next_offset: int = 0
    events: int = 0
    batches: int = 0
    duplicates: int = 0
    behind: int = 0


def ingest(client: Client, run_id: str, lines: Sequence[str], batch: int, *, demonstrate: bool = True) -> Ingest:
    """Journal `lines` from offset 0 in batches of `batch`, exactly once, whatever answers get lost."""
    done = Ingest()
    offset = 0
    while offset < len(lines):
        chunk = lines[offset : offset + batch]
        reply = client.post_source(run_id, offset, chunk)
        if reply.status == 200:
            answer = reply.json()
            done.next_offset = int(answer["next_offset"])
            done.events += int(answer["events"])
            if answer["duplicate"]:
                done.duplicates += 1
            else:
                done.batches += 1
            if done.next_offset != offset + len(chunk):
                raise HostError(f"batch at {offset}: the host says next_offset {done.next_offset}")
            print(
                f"  offset {offset:>5}: {len(chunk):>4} lines, {answer['events']:>4} events, position"
                f" {answer['position']}{' (duplicate)' if answer['duplicate'] else ''}"
            )
            offset = done.next_offset
            if demonstrate:
                demonstrate = False
                # An exact retry, as after an answer lost on the way back: acknowledged, changes nothing.
                again = client.post_source(run_id, 0, chunk)
                if again.status != 200 or not again.json()["duplicate"]:
                    raise HostError(f"an exact retry of the first batch was answered {again.status}: {again.body!r}")
                done.duplicates += 1
                print(f"  offset     0: {len(chunk):>4} lines again: acknowledged as duplicate, nothing changed")
                if offset < len(lines):
                    # A resend that overlaps the journal's end: the host answers 409 behind, and the loop goes on
                    # from expected_offset as it would after any partial loss.
                    offset = len(chunk) // 2
            continue
        error = reply.error()
        if reply.status == 409 and error.get("code") == "offset":
            expected = int(error["expected_offset"])
            conflict = error.get("conflict")
            if conflict in ("behind", "ahead") and 0 <= expected <= len(lines) and expected != offset:
                if conflict == "behind":
                    done.behind += 1
                print(f"  offset {offset:>5}: 409 {conflict}, the journal ends at {expected}: resending from there")
                offset = expected
                continue
        raise HostError(f"batch at offset {offset} refused: {reply.status} {reply.body.decode('utf-8', 'replace')}")
    return done


def summary(snapshot: dict[str, Any]) -> str:
    items = snapshot["items"]
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    failed = sum(1 for item in items if item["kind"] == "tool_call" and item["state"] == "failed")
    position = snapshot["continuation"]["position"]
    return (
        f"{len(items)} items ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}),"
        f" {kinds.get('tool_call', 0)} tool calls, {failed} failed,"
        f" position {position['attempt']}-{position['sequence']}"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--serve", default="http://127.0.0.1:8787", help="the a13n-stream serve to journal into")
    parser.add_argument("--run-seed", type=int, default=0, help="the seed of the Harness run's content")
    parser.add_argument("--batch", type=int, default=50, help="source lines per POST")
    parser.add_argument("--tool-rounds", type=int, default=10, help="model turns that call tools")
    parser.add_argument("--words", type=int, default=100, help="words of the final answer")
    args = parser.parse_args(argv)
    if args.batch < 2:
        parser.error("--batch must be at least 2")

    items = real_run(args.run_seed, tool_rounds=args.tool_rounds, words=args.words)
    run_id: str = items[0].run_id
    print(f"run {run_id}: {len(items)} native stream items")

    # The live loop: each source item's AG-UI events, folded at once into the display a page shows.
    fold = DisplayFold(run_id)
    observed: list[Observed] = []
    lines: list[str] = []
    for source in items:
        observed.extend(fold.fold(fold.events(source), source))
        lines.append(to_source_line(source))
    changed = sum(1 for entry in observed if entry.item is not None)
    print(f"live fold: {len(observed)} AG-UI events, {changed} of them changed a display item")

    client = Client(args.serve, token=os.environ.get("A13N_STREAM_TOKEN"))
    try:
        done = ingest(client, run_id, lines, args.batch)
        reply = client.snapshot(run_id)
    except HostError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if reply.status != 200:
        print(f"error: GET snapshot answered {reply.status}: {reply.body.decode('utf-8', 'replace')}", file=sys.stderr)
        return 1
    print(
        f"journaled {done.next_offset} lines: {done.batches} batches committed,"
        f" {done.duplicates} duplicate acknowledged, {done.behind} behind, {client.retries} transport retries;"
        f" the host produced {done.events} events"
    )

    host_json = reply.body.decode("utf-8")
    local_json = fold.export().model_dump_json()
    print(f"host display:  {summary(json.loads(host_json))}")
    print(f"local display: {summary(json.loads(local_json))}")
    ok = True
    if done.next_offset != len(lines):
        print(f"MISMATCH: the journal holds {done.next_offset} lines, the run has {len(lines)}")
        ok = False
    if done.events != len(observed):
        print(f"MISMATCH: the host produced {done.events} AG-UI events, the live fold {len(observed)}")
        ok = False
    if host_json != local_json:
        shorter = min(len(host_json), len(local_json))
        at = next((i for i, (a, b) in enumerate(zip(host_json, local_json)) if a != b), shorter)
        print(f"MISMATCH: the snapshots differ from character {at}:")
        print(f"  host  {host_json[at:at + 100]!r}")
        print(f"  local {local_json[at:at + 100]!r}")
        ok = False
    else:
        print(f"snapshot: host and local fold equal byte for byte ({len(host_json.encode('utf-8'))} bytes)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

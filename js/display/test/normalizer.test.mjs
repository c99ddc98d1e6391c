// The normalizer's contract: repeats ignored, gaps and foreign runs refused with their kind, a bad checkpoint
// refused naming the field, items in ordinal order, and an export that a host will not mistake for its own.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { DisplayError, DisplayNormalizer } from "../dist/index.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const caseDir = join(root, "tests", "cases", "extra-parts");
const settings = JSON.parse(readFileSync(join(caseDir, "case.json"), "utf8"));
const cut = settings.cuts[0];
const checkpoint = readFileSync(join(caseDir, "cuts", `${cut}.display.json`), "utf8");
const entries = readFileSync(join(caseDir, "observed.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .slice(cut)
  .flatMap((line) => JSON.parse(line).observed ?? []);

test("entries apply in order; a repeat changes nothing", () => {
  const display = DisplayNormalizer.restore(checkpoint);
  const [first, second] = entries;
  const changed = display.apply(first);
  assert.equal(display.position.sequence, first.sequence);
  assert.deepEqual(changed, first.item ? [first.item.id] : []);
  const before = JSON.stringify(display.export());
  assert.deepEqual(display.apply([first]), []);
  assert.equal(JSON.stringify(display.export()), before);
  display.apply([first, second]);
  assert.equal(display.position.sequence, second.sequence);
});

test("a gap is refused and applies nothing", () => {
  const display = DisplayNormalizer.restore(checkpoint);
  const before = JSON.stringify(display.export());
  assert.throws(() => display.apply(entries[2]), (error) => error instanceof DisplayError && error.kind === "gap" && error.sequence === entries[2].sequence);
  // One entry missing is named as one (it said "entries 27 to 27").
  assert.throws(() => display.apply(entries[1]), (error) => error.kind === "gap" && / entry \d+ is missing/.test(error.message));
  assert.equal(JSON.stringify(display.export()), before);
  display.apply(entries.slice(0, 3));
});

test("an entry of another run is refused, and the display then refuses all until restored", () => {
  const foreign = JSON.parse(checkpoint);
  foreign.continuation.run_id = "another-run";
  const display = DisplayNormalizer.restore(foreign);
  const withItem = entries.findIndex((entry) => entry.item !== null);
  assert.throws(() => display.apply(entries.slice(0, withItem + 1)), (error) => error.kind === "diverged" && /another run/.test(error.message));
  assert.throws(() => display.apply(entries[withItem + 1]), (error) => error.kind === "stale");
  // Its checkpoint would hold the entry it could not check (a restore of it failed at the next entry).
  assert.throws(() => display.export(), (error) => error.kind === "stale");
});

test("a gap or a malformed entry later in a batch applies none of it, and the display goes on", () => {
  const display = DisplayNormalizer.restore(checkpoint);
  const before = JSON.stringify(display.export());
  // The first two entries used to be applied before the gap was seen, their changes never returned.
  assert.throws(() => display.apply([entries[0], entries[1], entries[3]]), (error) => error.kind === "gap");
  assert.equal(JSON.stringify(display.export()), before);
  // An entry without its event used to leave the display refusing everything until restored.
  const eventless = { sequence: entries[1].sequence };
  assert.throws(() => display.apply([entries[0], eventless]), (error) => error.kind === "entry" && error.path === "[1].event");
  assert.equal(JSON.stringify(display.export()), before);
  display.apply(entries.slice(0, 4));
  assert.equal(display.position.sequence, entries[3].sequence);
});

test("an entry whose item is no item reference is refused before anything is applied, naming its place", () => {
  // Found by a trial: an entry without its item, or with a string for it, was folded first, then reported as
  // `diverged` ("the entry is from another run"), and the display was left refusing everything.
  const display = DisplayNormalizer.restore(checkpoint);
  const before = JSON.stringify(display.export());
  const withItem = (item) => ({ sequence: entries[0].sequence, event: entries[0].event, item });
  const { item: _, ...itemless } = entries[0];
  const reference = { id: "itm_1", kind: "text_message", state: "completed", ordinal: 1, response_group: null, failure: null };
  for (const [bad, field, found] of [
    [itemless, "item", "found nothing"],
    [withItem("garbage"), "item", 'found "garbage"'],
    [withItem({ id: "itm_1", kind: "text_message" }), "item.state", "must be a string, found undefined"],
    [withItem({ ...reference, ordinal: 1.5 }), "item.ordinal", "must be an integer or null, found 1.5"],
    [withItem({ ...reference, failure: 5 }), "item.failure", "must be an object or null, found 5"],
  ]) {
    assert.throws(
      () => display.apply(bad),
      (error) => error.kind === "entry" && error.path === field && error.message.endsWith(found),
    );
    assert.throws(
      () => display.apply([entries[0], { ...bad, sequence: entries[1].sequence }]),
      (error) => error.kind === "entry" && error.path === `[1].${field}` && error.sequence === entries[1].sequence,
    );
    assert.equal(JSON.stringify(display.export()), before);
  }
  assert.throws(
    () => display.apply([entries[0], { ...entries[1], sequence: "2" }]),
    (error) => error.kind === "entry" && error.path === "[1].sequence" && error.message.endsWith('found "2"'),
  );
  assert.throws(() => display.apply([entries[0], null]), (error) => error.kind === "entry" && error.path === "[1]");
  display.apply(entries.slice(0, 4));
  assert.equal(display.position.sequence, entries[3].sequence);
});

test("a bad checkpoint names the field", () => {
  const bad = JSON.parse(checkpoint);
  bad.items[0].ordinal = 0;
  assert.throws(() => DisplayNormalizer.restore(bad), (error) => error.kind === "checkpoint" && error.path === "items[0].ordinal");
  assert.throws(() => DisplayNormalizer.restore("{"), (error) => error.kind === "checkpoint");
  const noSequence = JSON.parse(checkpoint);
  delete noSequence.continuation.position.sequence;
  assert.throws(() => DisplayNormalizer.restore(noSequence), (error) => error.path === "continuation.position.sequence");
});

test("items come in ordinal order and by id; export carries the observer only while it is current", () => {
  const display = DisplayNormalizer.restore(checkpoint);
  assert.deepEqual(display.export().continuation.observer, JSON.parse(checkpoint).continuation.observer);
  display.apply(entries);
  const items = display.items();
  assert.deepEqual(items.map((item) => item.ordinal), items.map((_, index) => index + 1));
  for (const item of items) assert.equal(display.item(item.id), item);
  assert.equal(display.export().continuation.observer, null);
  const again = DisplayNormalizer.restore(display.export());
  assert.equal(JSON.stringify(again.items()), JSON.stringify(items));
});

test("restore does not share state with the object it was given", () => {
  const object = JSON.parse(checkpoint);
  const display = DisplayNormalizer.restore(object);
  display.apply(entries);
  assert.equal(JSON.stringify(object), JSON.stringify(JSON.parse(checkpoint)));
});

test("a checkpoint's times are checked as the host's reader checks them, and written as it writes them", () => {
  const withStarted = (text) => {
    const snapshot = JSON.parse(checkpoint);
    snapshot.items[0].started_at = text;
    return snapshot;
  };
  const bad = [
    "yesterday", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01", "1700000000", "2026-01-01T10:00+05",
    "2026-01-01T10:00+99:99", "2026-01-01T10:00+24:00", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00",
  ];
  for (const text of bad) {
    assert.throws(
      () => DisplayNormalizer.restore(withStarted(text)),
      (error) => error instanceof DisplayError && error.kind === "checkpoint" && error.path === "items[0].started_at",
      text,
    );
  }
  // As the CLI exports each (a new user's trial found them kept as written).
  const good = [
    ["2026-01-01 10:00", "2026-01-01T10:00:00Z"],
    ["2026-01-01T10:00:00.5+0530", "2026-01-01T04:30:00.500000Z"],
    ["2024-02-29T23:59:59.123456Z", "2024-02-29T23:59:59.123456Z"],
    ["2026-01-01T10:00:00+05:30:15", "2026-01-01T04:29:45Z"],
    ["0001-01-01T00:00:00-01:00", "0001-01-01T01:00:00Z"],
    ["9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"],
  ];
  for (const [text, written] of good) {
    const display = DisplayNormalizer.restore(withStarted(text));
    assert.equal(display.export().items[0].started_at, written, text);
  }
});

test("a diverged entry whose references differ only in response group or failure says so", () => {
  // Regression (a new user's trial): the message showed the same id, kind, state and ordinal on both sides.
  const withItem = entries.findIndex((entry) => entry.item !== null);
  for (const [field, value] of [["response_group", "another-group"], ["failure", { message: "no" }]]) {
    const display = DisplayNormalizer.restore(checkpoint);
    const changed = structuredClone(entries.slice(0, withItem + 1));
    changed[withItem].item[field] = value;
    const named = field === "failure" ? "failure" : "response group";
    assert.throws(
      () => display.apply(changed),
      (error) => error.kind === "diverged" && error.message.includes(`${named} ${JSON.stringify(value)}`),
      field,
    );
  }
});

test("a number past JavaScript's exact integers is refused as such, not as a negative one", () => {
  // From a new user's trial: a sequence above 2^53 was told it "must be an integer of at least 0".
  const far = JSON.parse(checkpoint);
  far.continuation.next_ordinal = 2 ** 53 + 2;
  assert.throws(() => DisplayNormalizer.restore(far), (error) => error.kind === "checkpoint" && /2\^53 - 1/.test(error.message));
  const display = DisplayNormalizer.restore(checkpoint);
  assert.throws(() => display.apply({ ...entries[0], sequence: 2 ** 53 + 2 }), (error) => error.kind === "entry" && /2\^53 - 1/.test(error.message));
});

test("a bad fragment part is named by its index", () => {
  // From a new user's trial: the message named the list, not the element.
  const bad = JSON.parse(checkpoint);
  bad.continuation.fragments = { pending: { f1: { count: 3, parts: ["a", 5], size: 1 } }, gap: false, max_bytes: 100, max_pending: 2 };
  assert.throws(() => DisplayNormalizer.restore(bad), (error) => error.kind === "checkpoint" && error.path === "continuation.fragments.pending.f1.parts[1]");
});

test("a null where the host's reader wants a number, a list or an object is refused, not taken as missing", () => {
  // Found by a review: `?? default` read null as a missing field in the fragments' state, which the CLI refuses.
  const cases = [
    [{ pending: null }, "continuation.fragments.pending"],
    [{ pending: { f: { count: 2, parts: null } } }, "continuation.fragments.pending.f.parts"],
    [{ pending: { f: { count: 2, parts: [], size: null } } }, "continuation.fragments.pending.f.size"],
    [{ max_bytes: null }, "continuation.fragments.max_bytes"],
    [{ max_pending: null }, "continuation.fragments.max_pending"],
  ];
  for (const [fragments, path] of cases) {
    const bad = JSON.parse(checkpoint);
    bad.continuation.fragments = fragments;
    assert.throws(() => DisplayNormalizer.restore(bad), (error) => error.kind === "checkpoint" && error.path === path, path);
  }
});

test("a field no checkpoint has is refused, naming it, as the host's reader refuses it", () => {
  // From a new user's trial: unknown keys were accepted and dropped on export, where the CLI refuses them.
  const withItem = JSON.parse(checkpoint);
  assert.ok(withItem.items.length > 0, "the cut has items");
  const cases = [
    [(value) => (value.surprise = 1), "surprise"],
    [(value) => (value.continuation.surprise = 1), "continuation.surprise"],
    [(value) => (value.continuation.position.surprise = 1), "continuation.position.surprise"],
    [(value) => (value.items[0].surprise = 1), "items[0].surprise"],
    // Found by a second trial: the fragments' own fields were not checked, nor the stream of held arguments.
    [(value) => (value.continuation.fragments = { pending: {}, surprise: 1 }), "continuation.fragments.surprise"],
    [
      (value) => (value.continuation.arguments = { key: "k", at: "2026-01-01T00:00:00Z", sequence: 1, event: null, size: 0 }),
      "continuation.arguments.stream",
    ],
  ];
  for (const [change, path] of cases) {
    const bad = JSON.parse(checkpoint);
    change(bad);
    assert.throws(() => DisplayNormalizer.restore(bad), (error) => error.kind === "checkpoint" && error.path === path, path);
  }
});

test("items() is in ordinal order whatever order a checkpoint lists them in", () => {
  // items() skips its sort when the items are held in ordinal order (the common case); a checkpoint that lists them
  // otherwise (edited by hand, or another writer's) must still come out in order.
  const whole = readFileSync(join(caseDir, "display.json"), "utf8");
  const parsed = JSON.parse(whole);
  assert.ok(parsed.items.length > 2);
  const inOrder = DisplayNormalizer.restore(whole).items().map((item) => item.ordinal);
  assert.deepEqual(inOrder, [...inOrder].sort((a, b) => a - b));
  parsed.items.reverse();
  const reversed = DisplayNormalizer.restore(JSON.stringify(parsed)).items().map((item) => item.ordinal);
  assert.deepEqual(reversed, inOrder);
});

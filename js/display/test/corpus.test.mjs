// The whole conformance corpus at every cut: restore the reference's checkpoint at cut K, apply the entries the
// reference's fold handed out for source items K.., and end with the reference's final checkpoint exactly (items,
// content key order, stream ids and timestamps), the host's observer state aside.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { DisplayNormalizer } from "../dist/index.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
// The public corpus beside the checkout (../shared/conformance, or A13N_CONFORMANCE), and the project's own cases.
const corpora = [
  process.env.A13N_CONFORMANCE ? join(process.env.A13N_CONFORMANCE, "cases") : join(root, "..", "shared", "conformance", "cases"),
  join(root, "tests", "cases"),
];

/** The entries of each source item, as recorded (an item the observer refused has none). */
function observedLines(dir) {
  return readFileSync(join(dir, "observed.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line).observed ?? []);
}

/** A checkpoint as JSON text with the host's observer state left out. */
function withoutObserver(snapshot) {
  const { observer, ...continuation } = snapshot.continuation;
  return JSON.stringify({ items: snapshot.items, continuation });
}

for (const corpus of corpora) {
  test(`corpus ${corpus} is present`, () => {
    assert.ok(existsSync(corpus), `no corpus at ${corpus}: set A13N_CONFORMANCE to the conformance folder`);
  });
  if (!existsSync(corpus)) continue;
  for (const name of readdirSync(corpus).sort()) {
    const dir = join(corpus, name);
    const settings = JSON.parse(readFileSync(join(dir, "case.json"), "utf8"));
    test(`${name}: every cut restores and ends at the reference's display`, () => {
      const lines = observedLines(dir);
      const expected = withoutObserver(JSON.parse(readFileSync(join(dir, "display.json"), "utf8")));
      assert.ok(settings.cuts.length > 0, "a case with no cuts");
      for (const cut of settings.cuts) {
        const text = readFileSync(join(dir, "cuts", `${cut}.display.json`), "utf8");
        const display = DisplayNormalizer.restore(text, { retainContent: settings.retain_content === true });
        for (const entries of lines.slice(cut)) display.apply(entries);
        assert.equal(withoutObserver(display.export()), expected, `${name} restored at cut ${cut}`);
      }
    });
  }
}

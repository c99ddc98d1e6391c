// What one render of the run page costs in its model (the items sorted, the header's figures, the rows), on a
// checkpoint: `a13n-stream fold run.jsonl > display.json && node bench/model.mjs display.json`. The DOM's part
// is the windowed list's, which renders only the rows near the screen.
import { readFileSync } from "node:fs";

import { rows, streamingCalls, summarize } from "../../../crates/a13n-stream-server/src/viewer/assets/viewer/src/model.js";
import { DisplayNormalizer } from "../../../crates/a13n-stream-server/src/viewer/assets/display/src/normalizer.js";

const path = process.argv[2];
if (!path) {
  console.error("usage: node bench/model.mjs <checkpoint.json>");
  process.exit(2);
}
const display = DisplayNormalizer.restore(JSON.parse(readFileSync(path, "utf8")));
function render() {
  const items = display.items();
  const streaming = streamingCalls(items);
  summarize(items, false, streaming);
  return rows(items, { open: new Set(), showAll: false, streaming }).length;
}
for (let i = 0; i < 20; i += 1) render();
const times = [];
for (let i = 0; i < 50; i += 1) {
  const start = performance.now();
  render();
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(`${display.items().length} items, ${render()} rows: ${median.toFixed(2)} ms a render (median of 50)`);

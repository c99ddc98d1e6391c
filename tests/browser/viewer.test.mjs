// The run viewer in a real browser: `a13n-stream serve` on loopback, Debian's chromium driven by playwright-core.
// A stream is ingested in batches while the page is open (and the host restarted half-way, so the page must
// reconnect with Last-Event-ID); the page must then show every item of the fold with its text and state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const binary = process.env.A13N_STREAM_BIN || join(root, "target/release/a13n-stream");
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
const screenshot = process.env.SCREENSHOT || join(root, "target/viewer.png");

function serve(database, listen = "127.0.0.1:0", extra = []) {
  const child = spawn(binary, ["serve", "--listen", listen, "--db", database, ...extra], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolveAddress, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("serve did not start")), 30000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = out.match(/listening on (http:\/\/\S+)/);
      if (match) { clearTimeout(timer); resolveAddress({ child, base: match[1] }); }
    });
    child.on("exit", (code) => reject(new Error("serve exited " + code)));
  });
}

function stop(child) {
  return new Promise((done) => { child.once("exit", done); child.kill("SIGKILL"); });
}

async function post(base, run, offset, lines, headers = {}) {
  const response = await fetch(`${base}/v1/runs/${run}/source?offset=${offset}&on_reject=skip`, {
    method: "POST",
    headers: { "Content-Type": "application/x-ndjson", ...headers },
    body: lines.join("\n") + "\n",
  });
  assert.equal(response.status, 200, await response.text());
}

// What the fold says: the checkpoint `a13n-stream fold` writes for the same source (a rejected line is skipped,
// as the host skips it with on_reject=skip).
function expected(source) {
  const fold = spawnSync(binary, ["fold", source, "--export", "-"], { maxBuffer: 64 << 20, encoding: "utf8" });
  return JSON.parse(fold.stdout).items;
}

function launch() {
  return chromium.launch({
    executablePath: browserPath,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}

async function checkItems(page, items) {
  for (const item of items) {
    const node = page.locator(`[data-item-id="${item.id}"]`);
    const state = item.state === "failed" || item.content.failure ? "failed" : item.state;
    await node.waitFor({ state: "attached", timeout: 15000 });
    assert.equal(await node.getAttribute("data-state"), state, `${item.id} (${item.kind}) state`);
    assert.equal(await node.getAttribute("data-kind"), item.kind);
    const text = await node.textContent();
    if (item.kind === "text_message" || item.kind === "reasoning_message") {
      const words = String(item.content.text || "").slice(0, 200);
      assert.ok(text.includes(words), `${item.id}: shows its text ${JSON.stringify(words)}`);
    }
    if (item.kind === "tool_call" && item.content.toolCallName) {
      assert.ok(text.includes(item.content.toolCallName), `${item.id}: names its tool`);
    }
  }
}

test("the viewer shows a run live, through a host restart, as the fold says", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a13n-viewer-"));
  const database = join(dir, "host.db");
  const source = join(root, "examples/streams/tools.jsonl");
  const lines = readFileSync(source, "utf8").split("\n").filter((line) => line.trim());
  const run = JSON.parse(lines[0]).run_id;
  let host = await serve(database);
  const port = new URL(host.base).port;
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${host.base}/runs/${run}`);
    await page.locator("#run-title").waitFor();
    for (let offset = 0; offset < lines.length; offset += 4) {
      if (offset === 24) {
        // The host goes away and comes back on the same address: the page reconnects with Last-Event-ID.
        await stop(host.child);
        await new Promise((r) => setTimeout(r, 300));
        host = await serve(database, `127.0.0.1:${port}`);
      }
      await post(host.base, run, offset, lines.slice(offset, offset + 4));
      await new Promise((r) => setTimeout(r, 60));
    }
    await page.locator('#run-state[data-state="completed"]').waitFor({ timeout: 20000 });
    const items = expected(source);
    await checkItems(page, items);
    assert.equal(await page.locator("li.item").count(), items.length, "one element per item, no duplicates");
    // Long content is cut with a button that shows all of it; reasoning and observations fold away.
    assert.ok(await page.locator("details > summary").count() > 0);
    mkdirSync(dirname(screenshot), { recursive: true });
    await page.screenshot({ path: screenshot, fullPage: true });

    // The run list links to the run, with its state and item count.
    await page.goto(host.base + "/");
    const row = page.locator("#runs tr", { hasText: run });
    await row.waitFor();
    assert.ok((await row.textContent()).includes(String(items.length)));
    assert.ok((await row.locator(".state").getAttribute("data-state")) === "completed");
    // Keyboard: the link is reachable with Tab and opens the run with Enter.
    for (let step = 0; step < 10; step += 1) {
      await page.keyboard.press("Tab");
      if (await page.evaluate((id) => document.activeElement?.textContent === id, run)) break;
    }
    assert.equal(await page.evaluate(() => document.activeElement?.tagName), "A");
    await page.keyboard.press("Enter");
    await page.locator("#run-title").waitFor();
    assert.equal(await page.locator("#run-title").textContent(), run);
  } finally {
    await browser.close();
    await stop(host.child);
  }
});

test("subagent items nest under their run; a token is asked for once and sent with every request", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a13n-viewer-"));
  const source = join(root, "tests/cases/extra-subagent-groups/source.jsonl");
  const lines = readFileSync(source, "utf8").split("\n").filter((line) => line.trim());
  const run = JSON.parse(lines[0]).run_id;
  const host = await serve(join(dir, "host.db"), "127.0.0.1:0", ["--token", "s3cret"]);
  const browser = await launch();
  try {
    await post(host.base, run, 0, lines, { Authorization: "Bearer s3cret" });
    const page = await browser.newPage();
    await page.goto(`${host.base}/runs/${run}`);
    await page.locator("#token").fill("s3cret");
    await page.locator("#token-form button").click();
    const items = expected(source);
    await checkItems(page, items);
    const nested = items.filter((item) => item.content.subagentRunId);
    assert.ok(nested.length > 0, "the case has subagent items");
    for (const item of nested) {
      const section = page.locator(`[data-subagent="${item.content.subagentRunId}"] [data-item-id="${item.id}"]`);
      assert.equal(await section.count(), 1, `${item.id} sits in its subagent's section`);
    }
  } finally {
    await browser.close();
    await stop(host.child);
  }
});

// Test support: the release CLI the package is compared with (`A13N_STREAM_BIN`, else the workspace's build).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const root = fileURLToPath(new URL("../../..", import.meta.url));

/** The `a13n-stream` binary, or `undefined` when none is built (the tests that need it fail, naming it). */
export const binary =
  process.env.A13N_STREAM_BIN ??
  [join(root, "target", "release", "a13n-stream"), join(root, "target", "debug", "a13n-stream")].find(existsSync);

/** Run the CLI with `args`; its standard output. */
export function rust(args) {
  return execFileSync(binary, args, { maxBuffer: 1 << 30, encoding: "utf8" });
}

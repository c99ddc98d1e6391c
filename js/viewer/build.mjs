// Compiles the viewer (src/*.ts and the js/display modules it imports) with the pinned tsc into the files the
// binary embeds, crates/a13n-stream-server/src/viewer/assets/{viewer,display}/.
//   node build.mjs          rewrite them (the old output is removed first, so no stale module stays behind)
//   node build.mjs --check  compile into a scratch directory and fail unless the committed files are the same bytes
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const assets = join(here, "../../crates/a13n-stream-server/src/viewer/assets");
const outputs = ["viewer", "display"];
const tsc = join(here, "node_modules/typescript/bin/tsc");

function compile(outDir) {
  execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.json"), "--outDir", outDir], { stdio: "inherit" });
}

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

if (process.argv.includes("--check")) {
  const scratch = mkdtempSync(join(tmpdir(), "a13n-viewer-build-"));
  try {
    compile(scratch);
    const built = new Set(outputs.flatMap((dir) => files(join(scratch, dir))).map((path) => relative(scratch, path)));
    const committed = new Set(outputs.flatMap((dir) => files(join(assets, dir))).map((path) => relative(assets, path)));
    const problems = [];
    for (const path of built) {
      if (!committed.has(path)) problems.push(`missing: ${path}`);
      else if (!readFileSync(join(scratch, path)).equals(readFileSync(join(assets, path)))) problems.push(`differs: ${path}`);
    }
    for (const path of committed) if (!built.has(path)) problems.push(`not built from the sources: ${path}`);
    if (problems.length > 0) {
      console.error(`The committed viewer JavaScript (${relative(process.cwd(), assets)}) is not what the TypeScript compiles to:`);
      for (const problem of problems) console.error(`  ${problem}`);
      console.error("Run `npm run build` in js/viewer and commit the result.");
      process.exit(1);
    }
    console.log(`viewer assets: ${built.size} files, as compiled`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
} else {
  for (const dir of outputs) rmSync(join(assets, dir), { recursive: true, force: true });
  compile(assets);
}

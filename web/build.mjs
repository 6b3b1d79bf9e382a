// Builds the page into dist/ (index.html, app.js, app.css), the files the
// server embeds. `node build.mjs --check` builds into a temporary directory
// and fails if dist/ differs from what the sources give, so a committed
// bundle can never drift from its sources.
import * as esbuild from "esbuild";
import { mkdtempSync, readFileSync, writeFileSync, readdirSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes("--check");
const out = check ? mkdtempSync(join(tmpdir(), "rhizome-web-")) : join(here, "dist");
mkdirSync(out, { recursive: true });

await esbuild.build({
  entryPoints: { app: join(here, "src/main.js") },
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome100", "firefox100", "safari15"],
  outdir: out,
  legalComments: "none",
  logLevel: "warning",
  loader: { ".css": "css" },
});
writeFileSync(join(out, "index.html"), readFileSync(join(here, "src/index.html")));

if (check) {
  const dist = join(here, "dist");
  let stale = [];
  for (const name of readdirSync(out).sort()) {
    let committed = null;
    try {
      committed = readFileSync(join(dist, name));
    } catch {}
    if (!committed || !committed.equals(readFileSync(join(out, name)))) stale.push(name);
  }
  for (const name of readdirSync(dist)) {
    if (!readdirSync(out).includes(name)) stale.push(name);
  }
  rmSync(out, { recursive: true, force: true });
  if (stale.length) {
    console.error(`web/dist is stale (${stale.join(", ")}): run \`npm ci && npm run build\` in web/ and commit dist/`);
    process.exit(1);
  }
  console.log("web/dist matches its sources");
}

// Viewer benchmark: a London-scale city (bench/view_city.lua, 19 x 19 nodes: ~1,441
// rooms, ~44,800 vertices with buildings) written by `psdl view`, opened in headless
// Chromium with WebGL on its software renderer (SwiftShader), the way the browser tests
// run it.
//
//   node bench/bench_view.mjs [runs=3]        (after building: cmake --build build)
//
// Prints: the time `psdl view` takes (Lua: build the city from the script, payload, page),
// the page size, the time from navigation to the first frame drawn (best and median of
// `runs` fresh pages, with the split: script start, payload decoded, scene built), frames
// per second while orbiting (requestAnimationFrame: paced by the display, 60 at most), and
// the drawing cost per frame drawn back to back.
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openViewer } from "../viewer/tests/browser.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] || 3);
const tmp = mkdtempSync(join(tmpdir(), "psdl-bench-view-"));
const env = { ...process.env, PSDL_BUILD_DIR: process.env.PSDL_BUILD_DIR || join(ROOT, "build") };
const psdlFile = join(tmp, "bench_city.psdl"), html = join(tmp, "bench_city.html");
execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "build", join(ROOT, "bench/view_city.lua"), "-o", psdlFile, "-q"], { env });
let t0 = performance.now();
const said = execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "view", psdlFile, "-o", html], { env, encoding: "utf8" });
const viewMs = performance.now() - t0;
console.log(said.trim());
console.log(`psdl view of the .psdl: ${viewMs.toFixed(0)} ms; page ${(statSync(html).size / 1e6).toFixed(2)} MB`);

const browser = await launch();
const loads = [];
let fps = 0, drawMs = 0, info = null;
for (let i = 0; i < runs; i++) {
  const { page, errors } = await openViewer(browser, "file://" + html, { timeout: 60000 });
  if (errors.length) throw new Error("console errors: " + errors.join("; "));
  const t = await page.evaluate(() => ({ ...psdlViewer.timings, stats: psdlViewer.meta.stats }));
  loads.push(t);
  info = t.stats;
  if (i === runs - 1) {
    fps = await page.evaluate(() => psdlViewer.orbitFrames(240));
    drawMs = await page.evaluate(() => psdlViewer.drawMs(30));
  }
  await page.close();
}
await browser.close();
rmSync(tmp, { recursive: true, force: true });
loads.sort((a, b) => a.firstFrame - b.firstFrame);
const med = loads[Math.floor(loads.length / 2)];
const f = (x) => x.toFixed(0);
console.log(`city: ${info.rooms} rooms, ${info.vertices} vertices, ${info.triangles} triangles (${info.drawn_vertices} drawn vertices)`);
for (const [name, l] of [["best", loads[0]], ["median", med]]) {
  console.log(`open (${name} of ${runs}): first frame at ${f(l.firstFrame)} ms (script starts ${f(l.start)}, ` +
    `payload decoded ${f(l.decoded)}, scene built ${f(l.built)})`);
}
console.log(`orbit: ${fps.toFixed(1)} frames/s (requestAnimationFrame, 240 frames); ${drawMs.toFixed(1)} ms per frame drawn back to back`);

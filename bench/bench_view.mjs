// Viewer benchmark: a London-scale city (bench/london_city.lua, 19 x 19 nodes: 1,441 rooms,
// 44,767 PSDL vertices with buildings) written by `psdl view`, opened in headless Chromium
// with WebGL on its software renderer (SwiftShader), the way the browser tests run it.
//
//   node bench/bench_view.mjs [runs=3]        (after building: cmake --build build)
//
// Prints: the time `psdl view` takes, the page size, the time from navigation to the first
// frame drawn (best and median of `runs` fresh pages, split: script start, payload decoded,
// scene built; then when the tiles and levels of detail are ready), and, for the whole city
// in view while orbiting: the page as shipped (its motion quality controller, viewer/src/
// quality.js, after it settled; its first drag too), the motion picture of the previous
// rounds (half resolution), the same at full detail, full resolution and detail while moving,
// and the page with the city hidden (alternating, so all see the same load); then for a
// neighbourhood seen from 250 m: frames drawn per second while the camera turns a step every animation frame (as a
// drag does; the page draws at most once per requestAnimationFrame: 60 at most), the time
// of one frame drawn at full resolution and waited for (best and median), triangles and
// draw calls, and Chromium's CPU time per frame (all its processes, from /proc). Chromium
// runs as viewer/tests/browser.mjs starts it (WebGL on SwiftShader, software compositing). The machine's
// load average is printed with every figure: on a busy machine the wall-clock times mostly
// measure the wait for a core; SwiftShader's worker threads spin while they wait for work,
// so its CPU time is an upper bound of the work too.
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync, rmSync, readFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openViewer } from "../viewer/tests/browser.mjs";
import { cpuMs, load } from "./proc_cpu.mjs";


const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] || 3);
const tmp = mkdtempSync(join(tmpdir(), "psdl-bench-view-"));
const env = { ...process.env, PSDL_BUILD_DIR: process.env.PSDL_BUILD_DIR || join(ROOT, "build") };
const psdlFile = join(tmp, "bench_city.psdl"), html = join(tmp, "bench_city.html");
execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "build", join(ROOT, "bench/london_city.lua"), "-o", psdlFile, "-q", "--trust"], { env });
const t0 = performance.now();
const said = execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "view", psdlFile, "-o", html], { env, encoding: "utf8" });
const viewMs = performance.now() - t0;
console.log(said.trim());
console.log(`psdl view of the .psdl: ${viewMs.toFixed(0)} ms; page ${(statSync(html).size / 1e6).toFixed(2)} MB`);

const browser = await launch();
const pid = browser.process().pid;
const loads = [];
const FRAMES = 60, DRAWN = 20;
// orbit modes: "adaptive" the page as shipped (the motion quality controller, after a
// warm-up orbit so that it has settled); "half" the motion picture of the previous rounds
// (half the pixel ratio, the 2.5-pixel level rule: controller step 1 pinned); "full" the same
// at full detail; "fixed" full resolution and detail while moving (no controller); "empty"
// the page as shipped with the city hidden (the browser's own cost of a frame); "near-*" a
// neighbourhood seen from 250 m
const MODES = ["adaptive", "half", "full", "fixed", "empty", "adaptive", "half", "full", "fixed", "empty", "near-adaptive", "near-half", "near-adaptive", "near-half"];
const orbit = Object.fromEntries(MODES.map((m) => [m, []]));
let info = null;
for (let i = 0; i < runs; i++) {
  const c0 = cpuMs(pid);
  const { page, errors } = await openViewer(browser, "file://" + html, { timeout: 120000 });
  const cpu = cpuMs(pid) - c0;
  if (errors.length) throw new Error("console errors: " + errors.join("; "));
  await page.waitForFunction(() => psdlViewer.internals.city.levels, { timeout: 120000 });
  const t = await page.evaluate(() => ({ ...psdlViewer.timings, stats: psdlViewer.meta.stats,
    levels: psdlViewer.internals.city.levels.at, levelsMs: psdlViewer.internals.city.levels.ms,
    levelsBusy: psdlViewer.internals.city.levels.busy, longest: psdlViewer.internals.city.levels.longest,
    slices: psdlViewer.internals.city.levels.slices }));
  t.cpu = cpu;
  t.load = load();
  loads.push(t);
  info = t.stats;
  if (i === runs - 1) {
    // the controller's first drag: from its start step to where it settles
    const first = await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES);
    orbit.first = { ...first, load: load() };
    for (const mode of MODES) {
      const m = mode.replace("near-", "");
      await page.evaluate((m, near) => {
        const { city } = psdlViewer.internals;
        city.maxLevel = m === "full" ? 0 : Infinity;
        city.root.visible = m !== "empty";
        psdlViewer.adaptive = m !== "fixed"; // fixed: full resolution while moving too
        psdlViewer.quality.fixed = m === "half" || m === "full" ? 1 : null;
        psdlViewer.frameCity();
        if (near) {
          // a neighbourhood: 250 m from the city's centre, looking down at 35 degrees
          const t = psdlViewer.target();
          psdlViewer.view([t.x, t.y, t.z], [t.x + 150, t.y + 145, t.z + 150]);
        }
      }, m, mode.startsWith("near-"));
      await page.evaluate(() => psdlViewer.redraw());
      if (m === "adaptive") await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES); // settle
      const c1 = cpuMs(pid);
      const r = await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES);
      const cpuFrame = (cpuMs(pid) - c1) / FRAMES;
      const st = await page.evaluate(() => psdlViewer.internals.city.stats);
      await page.evaluate(() => psdlViewer.redraw()); // at rest: full resolution again
      const drawn = m === "empty" ? null : await page.evaluate((n) => psdlViewer.frameTimes(n), DRAWN);
      orbit[mode].push({ ...r, cpuFrame, drawn, st, load: load() });
    }
    await page.evaluate(() => { psdlViewer.internals.city.root.visible = true; psdlViewer.quality.fixed = null; psdlViewer.adaptive = true; });
  }
  await page.close();
}
await browser.close();
rmSync(tmp, { recursive: true, force: true });
loads.sort((a, b) => a.firstFrame - b.firstFrame);
const med = loads[Math.floor(loads.length / 2)];
const f = (x) => x.toFixed(0);
console.log(`city: ${info.rooms} rooms, ${info.vertices} PSDL vertices, ${info.triangles} triangles (${info.drawn_vertices} drawn vertices)`);
for (const [name, l] of [["best", loads[0]], ["median", med]]) {
  console.log(`open (${name} of ${runs}, load ${l.load}): first frame at ${f(l.firstFrame)} ms (script starts ${f(l.start)}, ` +
    `payload decoded ${f(l.decoded)}, scene built ${f(l.built)}); Chromium CPU time ${f(l.cpu)} ms; ` +
    `levels of detail ready at ${f(l.levels)} ms (${f(l.levelsMs)} ms after the first frame's task, ${f(l.levelsBusy)} ms of work in ` +
    `${l.slices} slices, the longest ${f(l.longest)} ms)`);
}
const label = { adaptive: "whole city in view, as shipped (motion quality controller, settled)",
  half: "whole city in view, half resolution and 2.5-pixel levels (controller step 1 pinned; the previous rounds' motion)",
  full: "whole city in view, half resolution, full detail", fixed: "whole city in view, full resolution and detail in motion",
  empty: "the same page with the city hidden (as shipped)",
  "near-adaptive": "a neighbourhood (250 m away), as shipped", "near-half": "a neighbourhood (250 m away), controller step 1 pinned" };
const fm = (x) => x.toFixed(1);
const o1 = orbit.first;
console.log(`orbit, the controller's first drag (load ${o1.load}): ${fm(o1.fps)} frames/s over ${FRAMES} frames, ${o1.steps} step changes, ending at step ${o1.step} (pixel ratio ${o1.ratio}, ${o1.lodPixels}-pixel levels)`);
for (const mode of Object.keys(label)) {
  for (const o of orbit[mode]) {
    console.log(`orbit, ${label[mode]} (load ${o.load}): ` +
      `${fm(o.fps)} frames/s at pixel ratio ${o.ratio}` + (o.step === null ? "" : ` (step ${o.step}, ${o.lodPixels}-pixel levels)`) + `, Chromium CPU ${o.cpuFrame.toFixed(0)} ms/frame; ` +
      (o.drawn ? `a frame drawn and waited for: best ${fm(o.drawn.best)} ms, median ${fm(o.drawn.median)} ms; ` : "") +
      `${o.st.triangles} triangles, ${o.st.drawCalls} draw calls, tiles per level ${o.st.levels.join("/")}`);
  }
}
console.log(`machine: ${cpus().length} cores, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);

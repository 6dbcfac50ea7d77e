// Viewer benchmark: a London-scale city (bench/london_city.lua, 19 x 19 nodes: 1,441 rooms,
// 44,767 PSDL vertices with buildings) written by `psdl view`, opened in headless Chromium
// with WebGL on its software renderer (SwiftShader), the way the browser tests run it.
//
//   node bench/bench_view.mjs [runs=3]        (after building: cmake --build build)
//
// Prints: the time `psdl view` takes, the page size, the time from navigation to the first
// frame drawn (best and median of `runs` fresh pages, split: script start, payload decoded,
// scene built; then when the tiles and levels of detail are ready), and, for the whole city
// in view while orbiting, with the levels of detail and at full detail (alternating, so both
// see the same load), the same with the full resolution kept while moving ("fixed"; the page
// draws at half the pixel ratio while the camera moves), then for a neighbourhood seen from
// 250 m: frames drawn per second while the camera turns a step every animation frame (as a
// drag does; the page draws at most once per requestAnimationFrame: 60 at most), the time
// of one frame drawn at full resolution and waited for (best and median), triangles and
// draw calls, and Chromium's CPU time per frame (all its processes, from /proc). Chromium
// runs as viewer/tests/browser.mjs starts it (WebGL on SwiftShader, software compositing). The machine's
// load average is printed with every figure: on a busy machine the wall-clock times mostly
// measure the wait for a core; SwiftShader's worker threads spin while they wait for work,
// so its CPU time is an upper bound of the work too.
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync, rmSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openViewer } from "../viewer/tests/browser.mjs";

// CPU time (ms, user + system) of a process and all its descendants, from /proc.
function cpuMs(root) {
  const stat = {};
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      stat[d] = { ppid: f[1], ticks: Number(f[11]) + Number(f[12]) };
    } catch { /* gone */ }
  }
  let total = 0;
  const want = new Set([String(root)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, st] of Object.entries(stat)) {
      if (!want.has(pid) && want.has(st.ppid)) { want.add(pid); grew = true; }
    }
  }
  for (const pid of want) total += stat[pid] ? stat[pid].ticks : 0;
  return total * 10; // 100 ticks per second
}
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];

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
const orbit = { lod: [], full: [], fixed: [], near: [] };
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
    for (const mode of ["lod", "full", "fixed", "lod", "full", "fixed", "near"]) {
      await page.evaluate((m) => {
        psdlViewer.internals.city.maxLevel = m === "full" ? 0 : Infinity;
        psdlViewer.adaptive = m !== "fixed"; // fixed: full resolution while moving too
        psdlViewer.frameCity();
        if (m === "near") {
          // a neighbourhood: 250 m from the city's centre, looking down at 35 degrees
          const t = psdlViewer.target();
          psdlViewer.view([t.x, t.y, t.z], [t.x + 150, t.y + 145, t.z + 150]);
        }
      }, mode);
      const c1 = cpuMs(pid);
      await page.evaluate(() => psdlViewer.redraw());
      const { fps, ratio } = await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES);
      const cpuFrame = (cpuMs(pid) - c1) / FRAMES;
      await page.evaluate(() => psdlViewer.redraw()); // at rest: full resolution again
      const drawn = await page.evaluate((n) => psdlViewer.frameTimes(n), DRAWN);
      const st = await page.evaluate(() => psdlViewer.internals.city.stats);
      orbit[mode].push({ fps, ratio, cpuFrame, drawn, st, load: load() });
    }
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
const label = { lod: "whole city in view, levels of detail", full: "whole city in view, full detail     ",
  fixed: "whole city, levels of detail, full resolution in motion", near: "a neighbourhood (250 m away), levels of detail" };
for (const mode of ["lod", "full", "fixed", "near"]) {
  for (const o of orbit[mode]) {
    console.log(`orbit, ${label[mode]} (load ${o.load}): ` +
      `${o.fps.toFixed(1)} frames/s at pixel ratio ${o.ratio}, Chromium CPU ${o.cpuFrame.toFixed(0)} ms/frame; a frame drawn and waited for: ` +
      `best ${o.drawn.best.toFixed(1)} ms, median ${o.drawn.median.toFixed(1)} ms; ${o.st.triangles} triangles, ` +
      `${o.st.drawCalls} draw calls, tiles per level ${o.st.levels.join("/")}`);
  }
}
console.log(`machine: ${cpus().length} cores, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);

// Viewer benchmark: a London-scale city (bench/london_city.lua, 19 x 19 nodes: ~1,441
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
// the drawing cost per frame drawn back to back, and Chromium's CPU time (all its
// processes) for each: on a busy machine the wall-clock times mostly measure waiting.
import { execFileSync } from "node:child_process";
import { mkdtempSync, statSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readdirSync, readFileSync } from "node:fs";
import { launch, openViewer } from "../viewer/tests/browser.mjs";

// CPU time (ms, user + system) of a process and all its descendants, from /proc: on a busy
// machine the wall-clock figures mostly measure the wait for a core; this is the work.
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

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] || 3);
const tmp = mkdtempSync(join(tmpdir(), "psdl-bench-view-"));
const env = { ...process.env, PSDL_BUILD_DIR: process.env.PSDL_BUILD_DIR || join(ROOT, "build") };
const psdlFile = join(tmp, "bench_city.psdl"), html = join(tmp, "bench_city.html");
execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "build", join(ROOT, "bench/london_city.lua"), "-o", psdlFile, "-q", "--trust"], { env });
let t0 = performance.now();
const said = execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "view", psdlFile, "-o", html], { env, encoding: "utf8" });
const viewMs = performance.now() - t0;
console.log(said.trim());
console.log(`psdl view of the .psdl: ${viewMs.toFixed(0)} ms; page ${(statSync(html).size / 1e6).toFixed(2)} MB`);

const browser = await launch();
const pid = browser.process().pid;
const loads = [];
let fps = 0, drawMs = 0, info = null, orbitCpu = 0;
const FRAMES = 120;
for (let i = 0; i < runs; i++) {
  const c0 = cpuMs(pid);
  const { page, errors } = await openViewer(browser, "file://" + html, { timeout: 60000 });
  const cpu = cpuMs(pid) - c0;
  if (errors.length) throw new Error("console errors: " + errors.join("; "));
  const t = await page.evaluate(() => ({ ...psdlViewer.timings, stats: psdlViewer.meta.stats }));
  t.cpu = cpu;
  loads.push(t);
  info = t.stats;
  if (i === runs - 1) {
    const c1 = cpuMs(pid);
    fps = await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES);
    orbitCpu = (cpuMs(pid) - c1) / FRAMES;
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
    `payload decoded ${f(l.decoded)}, scene built ${f(l.built)}); Chromium CPU time ${f(l.cpu)} ms`);
}
console.log(`orbit: ${fps.toFixed(1)} frames/s (requestAnimationFrame, ${FRAMES} frames), Chromium CPU time ` +
  `${orbitCpu.toFixed(1)} ms per frame (all threads); ${drawMs.toFixed(1)} ms per frame drawn back to back`);
const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`machine: ${(await import("node:os")).cpus().length} cores, load average ${load}`);

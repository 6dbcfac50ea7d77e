// What limits the viewer's frame rate in headless Chromium + SwiftShader: the London-scale
// page of bench_view.mjs drawn under variations, one at a time, each against the same
// page's default just before it (so that both see the same machine load).
//
//   node bench/view_floor.mjs [frames=20] [which=all|page|floor|flags]
//
// "page" variations (one browser, the tests' flags): canvas size, device pixel ratio,
// antialiasing, the city's shader against a one-colour shader, draw calls (one per tile),
// an empty scene, no WebGL drawing at all (requestAnimationFrame alone), the per-frame
// JavaScript (level-of-detail choice, HUD). "floor": the motion quality controller's last
// step (viewer/src/quality.js) against an empty page, back-face culling, 16-bit positions, a
// one-colour shader and half the triangles. "flags" variations: Chromium command lines.
// For each: frames per second through requestAnimationFrame while orbiting (what a user
// sees; 60 at most), the time of renderer.render() in JavaScript, a frame drawn and waited
// for (render + one-pixel read back, median), Chromium's CPU time per frame (all
// processes, /proc) and the load average.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { launch, openViewer, SWIFTSHADER as SWIFT } from "../viewer/tests/browser.mjs";
import { cpuMs, load } from "./proc_cpu.mjs";


const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FRAMES = Number(process.argv[2] || 20);
const which = process.argv[3] || "all";
const tmp = mkdtempSync(join(tmpdir(), "psdl-view-floor-"));
const env = { ...process.env, PSDL_BUILD_DIR: process.env.PSDL_BUILD_DIR || join(ROOT, "build") };
const psdlFile = join(tmp, "city.psdl"), html = join(tmp, "city.html");
execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "build", join(ROOT, "bench/london_city.lua"), "-o", psdlFile, "-q", "--trust"], { env });
execFileSync("lua5.4", [join(ROOT, "scripts/psdl"), "view", psdlFile, "-o", html, "-q"], { env });

async function open(args, viewport = { width: 1280, height: 800 }) {
  const browser = await launch({ gpu: args, ...viewport });
  const { page, errors } = await openViewer(browser, "file://" + html);
  if (errors.length) throw new Error(errors.join("; "));
  await page.waitForFunction(() => psdlViewer.internals.city.levels, { timeout: 120000 });
  return { browser, page };
}

// In the page: set a variation up (returns a function that undoes it).
const SETUPS = {
  default: () => () => {},
  adaptive: () => { psdlViewer.adaptive = true; return () => { psdlViewer.adaptive = false; }; },
  empty: ({ city }) => { city.root.visible = false; return () => { city.root.visible = true; }; },
  pixelRatio50: () => { psdlViewer.pixelRatio = 0.5; return () => { psdlViewer.pixelRatio = 1; }; },
  pixelRatio200: () => { psdlViewer.pixelRatio = 2; return () => { psdlViewer.pixelRatio = 1; }; },
  flatShader: ({ THREE, city }) => {
    const old = city.mesh.material;
    const m = new THREE.ShaderMaterial({
      vertexShader: "attribute vec3 roleColor; varying vec3 c; void main(){ c = roleColor; gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0); }",
      fragmentShader: "varying vec3 c; void main(){ gl_FragColor = vec4(c, 1.0); }", side: THREE.DoubleSide,
    });
    city.mesh.material = old.map(() => m);
    return () => { city.mesh.material = old; };
  },
  discard: ({ city }) => {
    // the city's shader as it was before: a discard (dead for plain colours) in every material
    const old = city.mesh.material.map((m) => m.fragmentShader);
    for (const m of city.mesh.material) {
      m.fragmentShader = m.fragmentShader.replace("gl_FragColor = vec4(col, 1.0);", "if (vState > 300.0) discard; gl_FragColor = vec4(col, 1.0);");
      m.needsUpdate = true;
    }
    return () => { city.mesh.material.forEach((m, i) => { m.fragmentShader = old[i]; m.needsUpdate = true; }); };
  },
  frontToBack: ({ city }) => { city.frontToBack = true; return () => { city.frontToBack = false; }; },
  tilePerCall: ({ city }) => {
    // one draw call per 600 triangles: the ranges are not merged
    const upd = city.update.bind(city);
    city.update = (cam, h) => {
      upd(cam, h);
      const g = [];
      for (const r of city.mesh.geometry.groups) for (let s = r.start; s < r.start + r.count; s += 3 * 600) g.push({ start: s, count: Math.min(3 * 600, r.start + r.count - s), materialIndex: r.materialIndex });
      city.mesh.geometry.groups = g;
      city.stats.drawCalls = g.length;
    };
    return () => { delete city.update; };
  },
  noWebGL: ({ renderer }) => {
    // requestAnimationFrame, the camera and the page's JavaScript only: no WebGL call
    const render = renderer.render;
    renderer.render = () => {};
    return () => { renderer.render = render; };
  },
  // the motion quality controller's floor (the last step: quarter resolution, 6-pixel level
  // rule, the 25 m level) and variations of it
  floor: () => {
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    return () => { psdlViewer.quality.fixed = null; };
  },
  floorEmpty: ({ city }) => {
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    city.root.visible = false;
    return () => { psdlViewer.quality.fixed = null; city.root.visible = true; };
  },
  floorBackFaces: ({ THREE, city }) => {
    // back faces culled (the payload mirrors z, so three.js's BackSide keeps the faces that
    // face the camera: roads from above, facades from the street)
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    city.materials.forEach((m) => { m.side = THREE.BackSide; m.needsUpdate = true; });
    return () => { psdlViewer.quality.fixed = null; city.materials.forEach((m) => { m.side = THREE.DoubleSide; m.needsUpdate = true; }); };
  },
  floorInt16: ({ THREE, city }) => {
    // positions as normalized 16-bit integers over the city's box (4 cm steps), the mesh
    // scaled back: 6 bytes a vertex instead of 12
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    const geo = city.geometry, old = geo.getAttribute("position"), a = old.array;
    const c = geo.boundingBox.getCenter(new THREE.Vector3()), size = geo.boundingBox.getSize(new THREE.Vector3());
    const k = (Math.max(size.x, size.y, size.z) / 2) * 1.001;
    const q = new Int16Array(a.length);
    for (let i = 0; i < a.length; i += 3) {
      q[i] = Math.round(((a[i] - c.x) / k) * 32767);
      q[i + 1] = Math.round(((a[i + 1] - c.y) / k) * 32767);
      q[i + 2] = Math.round(((a[i + 2] - c.z) / k) * 32767);
    }
    geo.setAttribute("position", new THREE.BufferAttribute(q, 3, true));
    city.mesh.scale.setScalar(k); city.mesh.position.copy(c); city.mesh.updateMatrixWorld();
    return () => {
      psdlViewer.quality.fixed = null;
      geo.setAttribute("position", old);
      city.mesh.scale.setScalar(1); city.mesh.position.set(0, 0, 0); city.mesh.updateMatrixWorld();
    };
  },
  floorFlatShader: ({ THREE, city }) => {
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    const old = city.mesh.material;
    const m = new THREE.ShaderMaterial({
      vertexShader: "attribute vec3 roleColor; varying vec3 c; void main(){ c = roleColor; gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0); }",
      fragmentShader: "varying vec3 c; void main(){ gl_FragColor = vec4(c, 1.0); }", side: THREE.DoubleSide,
    });
    city.mesh.material = old.map(() => m);
    return () => { psdlViewer.quality.fixed = null; city.mesh.material = old; };
  },
  floorHalfTriangles: ({ city }) => {
    // the floor's draw calls cut to half their triangles: what a triangle costs
    psdlViewer.adaptive = true;
    psdlViewer.quality.fixed = psdlViewer.motionSteps.length - 1;
    const upd = city.update.bind(city);
    city.update = (cam, h) => { upd(cam, h); for (const g of city.mesh.geometry.groups) g.count = 3 * Math.floor(g.count / 6); };
    return () => { psdlViewer.quality.fixed = null; delete city.update; };
  },
  antialias: ({ THREE, renderer }) => {
    // a renderer with antialias (MSAA) on, drawing the same scene into its own canvas
    const aa = new THREE.WebGLRenderer({ antialias: true });
    aa.setClearColor(0xdfe3e6);
    const old = renderer.domElement, render = renderer.render;
    old.replaceWith(aa.domElement);
    renderer.render = (s, c) => { aa.setSize(old.width, old.height, false); aa.render(s, c); };
    return () => { aa.domElement.replaceWith(old); renderer.render = render; aa.dispose(); };
  },
};

// Orbit FRAMES animation frames with a variation set up, as a user's drag would.
async function measure(page, pid, name) {
  await page.evaluate((n) => { psdlViewer.adaptive = false; window.__undo = window.SETUPS_SRC[n](psdlViewer.internals); }, name);
  await page.evaluate(() => psdlViewer.redraw());
  const c0 = cpuMs(pid);
  const r = await page.evaluate((n) => psdlViewer.orbitFrames(n), FRAMES);
  const cpu = (cpuMs(pid) - c0) / FRAMES;
  const more = await page.evaluate(() => {
    const { city, camera, renderer } = psdlViewer.internals;
    const b = performance.now();
    for (let k = 0; k < 20; k++) city.update(camera, renderer.domElement.height);
    const upd = (performance.now() - b) / 20;
    return { upd, stats: city.stats, canvas: [renderer.domElement.width, renderer.domElement.height] };
  });
  const drawn = name === "noWebGL" || name === "adaptive" || name.startsWith("floor") ? { median: 0 } : await page.evaluate(() => psdlViewer.frameTimes(9));
  await page.evaluate(() => { window.__undo && window.__undo(); window.__undo = null; psdlViewer.frameCity(); return psdlViewer.redraw(); });
  return { ...r, ...more, cpu, drawn: drawn.median, load: load() };
}

function row(label, r) {
  console.log(`| ${label} | ${r.canvas.join(" × ")} | ${r.load} | ${r.stats.triangles} / ${r.stats.drawCalls} | ${r.fps.toFixed(1)} | ${r.renderMs.toFixed(1)} ms | ${r.drawn ? r.drawn.toFixed(0) + " ms" : "–"} | ${r.cpu.toFixed(0)} ms | ${r.upd.toFixed(2)} ms |`);
}

const header = "| variation | canvas | load | triangles / draw calls | orbit (rAF) frames/s | renderer.render() JS | frame drawn and waited for (median) | Chromium CPU per frame | LOD choice JS |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |";

async function withPage(args, viewport, fn) {
  const { browser, page } = await open(args, viewport);
  // the setups as source, evaluated in the page
  await page.evaluate(`window.SETUPS_SRC = {${Object.entries(SETUPS).map(([k, f]) => `${k}: ${f.toString()}`).join(",")}}`);
  try { await fn(page, browser.process().pid, page); } finally { await browser.close(); }
}

try {
  if (which === "all" || which === "page") {
    console.log("\npage variations (tests' flags: " + SWIFT.join(" ") + ")\n\n" + header);
    await withPage(SWIFT, undefined, async (page, pid) => {
      const gl2 = await page.evaluate(() => ({ webgl2: psdlViewer.internals.renderer.capabilities.isWebGL2, renderer: (() => { const gl = psdlViewer.internals.renderer.getContext(); const e = gl.getExtension("WEBGL_debug_renderer_info"); return e ? gl.getParameter(e.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER); })() }));
      console.log(`(WebGL2: ${gl2.webgl2}; renderer: ${gl2.renderer})`);
      for (const v of ["default", "empty", "noWebGL", "default", "pixelRatio50", "adaptive", "default", "pixelRatio200",
        "default", "flatShader", "discard", "default", "frontToBack", "default", "frontToBack", "default", "tilePerCall", "default", "antialias"]) {
        row(v, await measure(page, pid, v));
      }
    });
    for (const [w, h] of [[800, 600], [1920, 1080]]) {
      await withPage(SWIFT, { width: w, height: h }, async (page, pid) => {
        row(`window ${w} × ${h}, default`, await measure(page, pid, "default"));
        row(`window ${w} × ${h}, empty`, await measure(page, pid, "empty"));
      });
    }
  }
  if (which === "all" || which === "floor") {
    console.log("\nthe motion floor and its variations (tests' flags: " + SWIFT.join(" ") + ")\n\n" + header);
    await withPage(SWIFT, undefined, async (page, pid) => {
      for (const v of ["default", "adaptive", "floor", "floorEmpty", "floor", "floorBackFaces", "floor", "floorInt16", "floor",
        "floorFlatShader", "floor", "floorHalfTriangles", "adaptive", "empty"]) {
        row(v, await measure(page, pid, v));
      }
    });
  }
  if (which === "all" || which === "flags") {
    console.log("\nChromium flags (city, default page)\n\n" + header.replace("variation", "flags"));
    const OLD = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"];
    for (const args of [OLD, [...OLD, "--disable-gpu-compositing"], [...OLD, "--disable-gpu-vsync", "--disable-frame-rate-limit"],
      ["--use-gl=angle", "--use-angle=swiftshader-webgl", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"],
      SWIFT, [...SWIFT, "--disable-gpu-vsync", "--disable-frame-rate-limit"]]) {
      try {
        await withPage(args, undefined, async (page, pid) => {
          const r = await measure(page, pid, "default");
          const e = await measure(page, pid, "empty");
          row(args.join(" "), r);
          row("  same, empty scene", e);
        });
      } catch (e) {
        console.log(`| ${args.join(" ")} | fails: ${String(e.message).slice(0, 120)} |`);
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

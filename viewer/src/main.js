// psdl view: the page. Reads the embedded city, draws it, wires the panel, navigation and
// (when served by `psdl view --watch`) reloads new builds in place, keeping the camera.
// `window.psdlViewer` exposes the state and a few actions for tests and benchmarks.
import * as THREE from "three";
import { embedded, inflate, parse } from "./payload.js";
import { City, LOD_PIXELS } from "./city.js";
import { MotionQuality, MOTION_STEPS } from "./quality.js";
import { Navigation } from "./navigation.js";
import { Ground } from "./ground.js";
import * as panel from "./panel.js";
import WebGL from "three/examples/jsm/capabilities/WebGL.js";

// Without WebGL 2 (no GPU and no software renderer, or WebGL switched off) nothing can be
// drawn: the page says so, the panel still shows the city's summary and problems, and the
// script stops here (three.js's renderer would fail to start).
if (!WebGL.isWebGL2Available()) {
  const message = "WebGL 2 is not available in this browser, so the city cannot be drawn. "
    + "Turn on hardware acceleration (or WebGL) in the browser's settings, or open the page in "
    + "another browser. Headless Chromium needs --enable-unsafe-swiftshader.";
  window.psdlViewer = { ready: false, frames: 0, errors: [message], version: 0, webgl: false };
  document.getElementById("no-webgl-text").textContent = message;
  document.getElementById("no-webgl").hidden = false;
  embedded().then((data) => {
    if (!data) return;
    panel.summary(data.meta);
    panel.problems(data.meta, () => {});
    window.psdlViewer.meta = data.meta;
  }).catch((e) => { window.psdlViewer.errors.push(String(e && e.message || e)); });
  throw new Error(message);
}

const host = document.getElementById("view");
const renderer = new THREE.WebGLRenderer({ antialias: false, powerPreference: "high-performance" });
renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2)); // see api.pixelRatio
renderer.setClearColor(0xdfe3e6);
host.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const camera = new THREE.PerspectiveCamera(50, 1, 0.5, 20000);
const city = new City(scene);
city.onchange = () => { dirty = true; }; // an image texture finished loading
const nav = new Navigation(camera, renderer.domElement);
const api = (window.psdlViewer = { ready: false, frames: 0, errors: [], version: 0 });
let ground = null;
let dirty = true;

function resize() {
  const w = host.clientWidth || 1, h = host.clientHeight || 1;
  renderer.setSize(w, h, false);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
  dirty = true;
}
window.addEventListener("resize", resize);
resize();

// ---------------------------------------------------------------- loading

function frameCity() {
  const box = city.box;
  const c = box.getCenter(new THREE.Vector3());
  const size = box.getSize(new THREE.Vector3());
  const r = Math.max(40, 0.5 * Math.hypot(size.x, size.z));
  camera.far = Math.max(5000, r * 20);
  camera.near = Math.max(0.3, r / 20000);
  camera.updateProjectionMatrix();
  nav.view(new THREE.Vector3(c.x, box.min.y, c.z), new THREE.Vector3(c.x + r * 0.55, box.min.y + r * 1.05, c.z + r * 1.25));
}

function layerState() {
  return {
    types: city.typeOn.slice(),
    kinds: city.kindOn.slice(),
    overlay: { ...city.overlay },
  };
}

function applyData(data, keepCamera) {
  const selected = city.selected;
  city.load(data);
  ground = null;
  const meta = data.meta;
  panel.summary(meta);
  panel.layers(meta, layerState(), (kind, key, on) => {
    if (kind === "type") city.setType(key, on);
    else if (kind === "kind") city.setKind(key, on);
    else city.setOverlay(key, on);
    dirty = true;
  });
  panel.problems(meta, flyToProblem);
  if (!keepCamera) frameCity();
  select(keepCamera && meta.rooms[selected - 1] ? selected : 0);
  showError(meta.error);
  api.meta = meta;
  api.version += 1;
  dirty = true;
}

function showError(err) {
  const box = document.getElementById("overlay");
  if (!err) { box.hidden = true; return; }
  document.getElementById("overlay-text").textContent = err.message || String(err);
  box.hidden = false;
}

// ---------------------------------------------------------------- selection

function select(id, fly) {
  city.select(id);
  panel.showRoom(city.meta, city.selected, (n) => select(n, true), city.visibleFrom(city.selected));
  api.selected = city.selected;
  if (fly && city.selected) nav.flyTo(city.center(city.selected), 90);
  dirty = true;
}

function flyToProblem(p) {
  const i = city.meta.problems.indexOf(p);
  api.problem = i;
  for (const li of document.querySelectorAll("#problems li.current")) li.classList.remove("current");
  const li = document.querySelector(`#problems li[data-index="${i}"]`);
  if (li) {
    li.classList.add("current");
    li.closest("details").open = true;
    li.scrollIntoView({ block: "nearest" });
  }
  if (p.room && city.meta.rooms[p.room - 1]) select(p.room);
  if (Array.isArray(p.at)) nav.flyTo(new THREE.Vector3(p.at[0], p.at[1], p.at[2]), 60);
  dirty = true;
}

const raycaster = new THREE.Raycaster();
function rayAt(clientX, clientY) {
  const rect = renderer.domElement.getBoundingClientRect();
  const ndc = new THREE.Vector2(((clientX - rect.left) / rect.width) * 2 - 1, -((clientY - rect.top) / rect.height) * 2 + 1);
  raycaster.setFromCamera(ndc, camera);
  return raycaster;
}
function pickAt(clientX, clientY) {
  return city.pick(rayAt(clientX, clientY)).room;
}

let down = null;
renderer.domElement.addEventListener("pointerdown", (e) => { down = { x: e.clientX, y: e.clientY }; });
renderer.domElement.addEventListener("pointerup", (e) => {
  if (!down || Math.hypot(e.clientX - down.x, e.clientY - down.y) > 4 || e.button !== 0) return;
  // a problem pin (drawn over everything) first, then the surface
  const p = city.pickProblem(rayAt(e.clientX, e.clientY));
  if (p) flyToProblem(p);
  else select(pickAt(e.clientX, e.clientY));
});
nav.orbit.addEventListener("change", () => { dirty = true; });

document.getElementById("search").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("search-room");
  const id = parseInt(input.value, 10);
  if (city.meta && city.meta.rooms[id - 1]) {
    input.setCustomValidity("");
    select(id, true);
  } else {
    input.setCustomValidity(`no room ${input.value} (1-${city.meta ? city.meta.rooms.length : 0})`);
    input.reportValidity();
  }
});

// ---------------------------------------------------------------- modes, keys

const modeButtons = { orbit: "mode-orbit", fly: "mode-fly", drive: "mode-drive" };
function setMode(mode) {
  if (mode === "drive" && !ground && city.meta) ground = new Ground(city.meta, city.buffers);
  nav.setMode(mode, ground);
  dirty = true;
}
nav.onchange = (mode) => {
  for (const [m, id] of Object.entries(modeButtons)) document.getElementById(id).classList.toggle("on", m === mode);
  document.getElementById("status").textContent = mode === "fly" ? "fly: drag to look, W A S D Q E, Shift"
    : mode === "drive" ? "drive: W/S speed, A/D steer" : "";
};
for (const [m, id] of Object.entries(modeButtons)) document.getElementById(id).addEventListener("click", () => setMode(m));
document.getElementById("top-view").addEventListener("click", () => { nav.topView(); dirty = true; });
window.addEventListener("keydown", (e) => {
  if (e.target instanceof HTMLInputElement) return;
  if (e.key === "t" || e.key === "T") { nav.topView(); dirty = true; }
  if (e.key === "Escape") select(0);
});

// ---------------------------------------------------------------- HUD: compass, scale

const needle = document.getElementById("needle");
const scaleBar = document.getElementById("scale-bar");
const scaleText = document.getElementById("scale-text");
const dir = new THREE.Vector3();
function hud() {
  // heading of the screen's up direction: the view direction, or the camera's up when
  // looking straight down
  camera.getWorldDirection(dir);
  if (Math.abs(dir.y) > 0.98) dir.set(0, 1, 0).applyQuaternion(camera.quaternion);
  const heading = Math.atan2(dir.x, -dir.z); // 0 = north (-z on the page), clockwise
  needle.setAttribute("transform", `rotate(${(-heading * 180) / Math.PI})`);
  const h = renderer.domElement.clientHeight || 1;
  const mpp = (2 * nav.focusDistance() * Math.tan((camera.fov * Math.PI) / 360)) / h;
  const target = mpp * 120;
  const p = Math.pow(10, Math.floor(Math.log10(target)));
  const nice = [1, 2, 5, 10].map((k) => k * p).filter((v) => v <= target).pop() || p;
  scaleBar.style.width = `${Math.round(nice / mpp)}px`;
  scaleText.textContent = nice >= 1000 ? `${nice / 1000} km` : `${nice} m`;
}

// ---------------------------------------------------------------- loop

// Drawn on demand: a frame only when something changed (the camera, a layer, the selection,
// a texture). While the camera moves, a controller (quality.js) picks the pixel ratio and
// the level-of-detail rule from the time between frames (a software renderer's frame costs
// about its triangles plus its pixels, bench/README.md "Viewer"); once the camera has rested
// REST_MS, the view is drawn again at full resolution and detail.
const REST_MS = 150;
api.pixelRatio = Math.min(window.devicePixelRatio || 1, 2); // full resolution (benchmarks change it)
api.adaptive = true; // false: full resolution and detail while moving too (benchmarks)
const quality = (api.quality = new MotionQuality()); // quality.fixed pins a step (benchmarks)
api.motionSteps = MOTION_STEPS;
let last = performance.now();
let movedAt = -Infinity;
let renderMs = 0;
let drewMoving = false; // the previous animation frame drew in motion
const lastView = new THREE.Matrix4(), lastProjection = new THREE.Matrix4();
const waiting = []; // resolved after the next frame drawn at full resolution
function setRatio(r) {
  if (renderer.getPixelRatio() === r) return;
  renderer.setPixelRatio(r);
  renderer.setSize(host.clientWidth || 1, host.clientHeight || 1, false);
}
function frame(now) {
  const dt = Math.min(0.1, (now - last) / 1000);
  last = now;
  nav.update(dt); // a camera that moved is seen below (drive mode at rest draws nothing)
  camera.updateMatrixWorld();
  if (!camera.matrixWorld.equals(lastView) || !camera.projectionMatrix.equals(lastProjection)) {
    lastView.copy(camera.matrixWorld);
    lastProjection.copy(camera.projectionMatrix);
    if (api.ready) movedAt = now; // the first view is no motion
    dirty = true;
  }
  const moving = api.adaptive && now - movedAt < REST_MS;
  if (!moving && (renderer.getPixelRatio() !== api.pixelRatio || city.moving)) dirty = true; // at rest: full quality
  if (!moving && drewMoving) quality.rest();
  let drew = false;
  if (dirty || api.continuous) {
    if (moving) {
      const step = quality.frame(now, drewMoving);
      setRatio(api.pixelRatio * step.scale);
      city.lodPixels = step.lodPixels;
    } else {
      setRatio(api.pixelRatio);
      city.lodPixels = LOD_PIXELS;
    }
    city.moving = moving;
    const t0 = performance.now();
    renderer.render(scene, camera);
    const ms = performance.now() - t0;
    renderMs += ms;
    if (!api.ready && api.timings) api.timings.firstRender = ms;
    hud();
    api.frames += 1;
    dirty = false;
    drew = true;
    if (!moving) for (const f of waiting.splice(0)) f(api.frames);
    if (!api.ready && city.meta) {
      api.loadMs = performance.now();
      if (api.timings) api.timings.firstFrame = api.loadMs;
      api.ready = true;
      document.body.dataset.ready = "1";
    }
  }
  drewMoving = drew && moving;
  requestAnimationFrame(frame);
}

// ---------------------------------------------------------------- test and bench hooks

/** Screen position (CSS pixels, page coordinates) of a room's centre. */
api.project = (id) => {
  const c = city.center(id);
  if (!c) return null;
  camera.updateMatrixWorld();
  const v = c.project(camera);
  const rect = renderer.domElement.getBoundingClientRect();
  return { x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height, visible: v.z < 1 };
};
api.select = (id) => select(id, false);
/** Screen position (CSS pixels, page coordinates) of the middle of problem i's pin. */
api.projectPin = (i) => {
  const p = city.meta.problems[i];
  const k = city.placed ? city.placed.indexOf(p) : -1;
  if (k < 0) return null;
  camera.updateMatrixWorld();
  const m = new THREE.Matrix4();
  city.markers.getMatrixAt(k, m);
  const v = new THREE.Vector3(0, 2.5, 0).applyMatrix4(m).project(camera);
  const rect = renderer.domElement.getBoundingClientRect();
  return { x: rect.left + ((v.x + 1) / 2) * rect.width, y: rect.top + ((1 - v.y) / 2) * rect.height, visible: v.z < 1 };
};
/** Draw a frame; resolves (with the frame count) once one is drawn at full resolution. */
api.redraw = () => new Promise((resolve) => { waiting.push(resolve); dirty = true; });
api.topView = () => { nav.topView(); dirty = true; };
api.frameCity = () => { frameCity(); dirty = true; };
/** Look straight down on a point from a height (metres). */
api.lookDown = (x, z, height) => {
  nav.view(new THREE.Vector3(x, 0, z), new THREE.Vector3(x, height, z + height * 1e-4));
  dirty = true;
};
/** Orbit view from a camera position onto a target (page coordinates, metres). */
api.view = (target, position) => {
  nav.view(new THREE.Vector3(...target), new THREE.Vector3(...position));
  dirty = true;
};
api.setMode = setMode;
/** Height of the drivable surface at (x, z) nearest `near` (null: none). */
api.groundHeight = (x, z, near) => {
  if (!ground) ground = new Ground(city.meta, city.buffers);
  return ground.height(x, z, near);
};
/** The orbit target (the point the camera looks at and flies to). */
api.target = () => ({ x: nav.orbit.target.x, y: nav.orbit.target.y, z: nav.orbit.target.z });
api.camera = () => ({ x: camera.position.x, y: camera.position.y, z: camera.position.z, mode: nav.mode });
api.pickAt = pickAt;
/** The scene's objects, for benchmarks (bench/bench_view.mjs) that take the frame apart. */
api.internals = { THREE, renderer, scene, camera, city };
/**
 * Orbit the camera around the target by 2 pi / n each animation frame, n times, and let the
 * page draw as it does for a user's drag (one frame per requestAnimationFrame at most).
 * Resolves to { fps: frames drawn per second, renderMs: mean time of renderer.render() in
 * JavaScript, ratio: the pixel ratio of the last frame drawn while moving, step: the motion
 * quality step it was drawn at (quality.js; null without `adaptive`), steps: the step changes
 * during the orbit, lodPixels: the level rule's pixels }.
 */
api.orbitFrames = (n) => new Promise((resolve) => {
  const t = nav.orbit.target.clone();
  const off = camera.position.clone().sub(t);
  const axis = new THREE.Vector3(0, 1, 0);
  let i = 0;
  const f0 = api.frames, r0 = renderMs, c0 = quality.changes;
  let t0 = 0;
  const step = () => {
    if (i === 0) t0 = performance.now();
    off.applyAxisAngle(axis, (2 * Math.PI) / n);
    camera.position.copy(t).add(off);
    camera.lookAt(t);
    i += 1;
    if (i <= n) requestAnimationFrame(step);
    else {
      renderer.getContext().finish();
      const drawn = api.frames - f0;
      resolve({ fps: (drawn * 1000) / (performance.now() - t0), renderMs: (renderMs - r0) / Math.max(1, drawn),
        ratio: renderer.getPixelRatio(), step: api.adaptive ? quality.fixed ?? quality.step : null,
        steps: quality.changes - c0, lodPixels: city.lodPixels });
    }
  };
  requestAnimationFrame(step);
});

/**
 * Frames drawn while orbiting, each waited for (a one-pixel read back): the drawing cost
 * without the display's frame pacing. Resolves to { best, median } milliseconds.
 */
api.frameTimes = (n) => {
  const t = nav.orbit.target.clone();
  const off = camera.position.clone().sub(t);
  const gl = renderer.getContext();
  const px = new Uint8Array(4);
  const times = [];
  for (let i = 0; i < n; i++) {
    off.applyAxisAngle(new THREE.Vector3(0, 1, 0), (2 * Math.PI) / n);
    camera.position.copy(t).add(off);
    camera.lookAt(t);
    const t0 = performance.now();
    renderer.render(scene, camera);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { best: times[0], median: times[Math.floor(n / 2)] };
};

// ---------------------------------------------------------------- watch

async function watch(interval) {
  let known = null;
  for (;;) {
    await new Promise((r) => setTimeout(r, interval));
    let state;
    try {
      state = await (await fetch("/state", { cache: "no-store" })).json();
    } catch {
      document.getElementById("status").textContent = "watch: the server is not answering";
      continue;
    }
    if (document.getElementById("status").textContent.startsWith("watch:")) document.getElementById("status").textContent = "";
    if (known === null) known = state.version;
    if (state.version !== known) {
      known = state.version;
      try {
        const bytes = new Uint8Array(await (await fetch("/payload", { cache: "no-store" })).arrayBuffer());
        applyData(parse(await inflate(bytes)), true);
      } catch (e) {
        showError({ message: "cannot load the new city: " + e.message });
      }
    }
    showError(state.error);
  }
}

// ---------------------------------------------------------------- start

(async () => {
  try {
    api.timings = { start: performance.now() };
    const data = await embedded();
    if (!data) throw new Error("this page holds no city");
    api.timings.decoded = performance.now();
    applyData(data, false);
    api.timings.built = performance.now();
    requestAnimationFrame(frame);
    if (data.meta.watch) watch(data.meta.watch.interval || 400);
  } catch (e) {
    api.errors.push(String(e && e.message || e));
    showError({ message: String(e && e.stack || e) });
    throw e;
  }
})();

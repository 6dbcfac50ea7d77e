// The city in the three.js scene: one indexed geometry (all rooms, sorted by material)
// drawn through square tiles at levels of detail (lod.js), a shader that hides attribute
// types and room kinds and highlights rooms per vertex (role colour, type and state
// attributes), and the line overlays (perimeters, neighbour links, road-record paths, facade
// bounds, the selection) and problem pins.
import * as THREE from "three";
import { list } from "./payload.js";
import { representativeSteps, simplify, STEP } from "./lod.js";

/** Vertex state: hidden (its room's kind is switched off). */
const HIDDEN = 255;

/** Cells (metres) of the coarse levels of detail, finest first (see lod.js). */
export const LOD_CELLS = [2, 5, 12, 25];
/**
 * Levels a frame at rest may use (full, 2, 5 and 12 m): the 25 m level keeps only the roofs
 * of buildings lower than a cube and breaks thin road strips, so it is drawn only while the
 * camera moves (City.moving), when the motion controller's pixel ratio and level rule
 * (quality.js) make a cube small enough on screen.
 */
export const REST_LEVELS = 3;
/** A tile is drawn at the coarsest level whose cell covers at most this many pixels. */
export const LOD_PIXELS = 2.5;
/** Tiles: squares of the ground at least TILE metres wide, at most MAX_TILES a side. */
const TILE = 150, MAX_TILES = 12;
/** Problem pins: a cone PIN_HEIGHT x PIN_WIDTH metres, scaled up to stay PIN_PIXELS tall. */
const PIN_HEIGHT = 4, PIN_WIDTH = 2.4, PIN_PIXELS = 26;

const frustum = new THREE.Frustum();
const m4 = new THREE.Matrix4();

/**
 * The tiles and levels of detail of a city mesh: triangles bucketed into square tiles by
 * their centre, each tile at the full level (repeated triangles dropped) and at each cell
 * of `cells`, all in one index buffer (level, then material, then tile: the tiles in view
 * at one level draw as one range per material). Returns { index, cells, tiles: [{ box,
 * ranges: [level] -> [{ start, count, materialIndex }], pick: the tile's full triangles }] }.
 */
export function buildLevels(geo, index, groups, cells = LOD_CELLS) {
  const steps = buildLevelSteps(geo, index, groups, cells);
  let r;
  do r = steps.next(); while (!r.done);
  return r.value;
}

/** Time (ms) the page spends on the levels of detail before it lets the browser work. */
export const LEVELS_SLICE_MS = 8;

/**
 * `buildLevels` in steps: a generator that yields every few thousand triangles or vertices
 * (a few milliseconds of work), so that the page builds the levels in slices of
 * LEVELS_SLICE_MS between frames and input events; returns what buildLevels returns.
 */
export function* buildLevelSteps(geo, index, groups, cells = LOD_CELLS) {
  const pos = geo.getAttribute("position").array;
  const room = geo.getAttribute("room").array;
  const info = geo.getAttribute("info").array;
  const box = geo.boundingBox;
  const nx = Math.max(1, Math.min(MAX_TILES, Math.ceil((box.max.x - box.min.x) / TILE)));
  const nz = Math.max(1, Math.min(MAX_TILES, Math.ceil((box.max.z - box.min.z) / TILE)));
  const sx = (box.max.x - box.min.x) / nx || 1, sz = (box.max.z - box.min.z) / nz || 1;
  const ntiles = nx * nz;
  const mats = [...new Set(groups.map((g) => g.materialIndex))];
  const nb = mats.length * ntiles;
  // bucket (material, tile) of every triangle; tiles in rows along x, so that neighbours
  // in view are neighbours in the buffer
  let ntri = 0;
  for (const g of groups) ntri += Math.floor(g.count / 3);
  const bucketOf = new Int32Array(ntri);
  const counts = new Int32Array(nb + 1);
  const lo = new Float32Array(ntiles * 3).fill(Infinity), hi = new Float32Array(ntiles * 3).fill(-Infinity);
  let n = 0;
  for (const g of groups) {
    const m = mats.indexOf(g.materialIndex);
    for (let t = g.start; t + 2 < g.start + g.count; t += 3, n++) {
      if (n % STEP === STEP - 1) yield;
      const a = 3 * index[t], b = 3 * index[t + 1], c = 3 * index[t + 2];
      const cx = (pos[a] + pos[b] + pos[c]) / 3, cz = (pos[a + 2] + pos[b + 2] + pos[c + 2]) / 3;
      const i = Math.min(nx - 1, Math.max(0, Math.floor((cx - box.min.x) / sx)));
      const j = Math.min(nz - 1, Math.max(0, Math.floor((cz - box.min.z) / sz)));
      const k = j * nx + i;
      bucketOf[n] = m * ntiles + k;
      counts[m * ntiles + k + 1] += 3;
      for (let d = 0; d < 3; d++) {
        const x0 = pos[a + d], x1 = pos[b + d], x2 = pos[c + d];
        const l = Math.min(x0, x1, x2), h = Math.max(x0, x1, x2);
        if (l < lo[3 * k + d]) lo[3 * k + d] = l;
        if (h > hi[3 * k + d]) hi[3 * k + d] = h;
      }
    }
  }
  for (let k = 0; k < nb; k++) counts[k + 1] += counts[k]; // start of each bucket
  const sorted = new Uint32Array(counts[nb]);
  const fill = counts.slice(0, nb);
  n = 0;
  for (const g of groups) {
    for (let t = g.start; t + 2 < g.start + g.count; t += 3, n++) {
      if (n % (4 * STEP) === 4 * STEP - 1) yield;
      const o = fill[bucketOf[n]];
      sorted[o] = index[t]; sorted[o + 1] = index[t + 1]; sorted[o + 2] = index[t + 2];
      fill[bucketOf[n]] = o + 3;
    }
  }
  const tiles = [];
  for (let k = 0; k < ntiles; k++) {
    tiles.push({
      box: new THREE.Box3(new THREE.Vector3(lo[3 * k], lo[3 * k + 1], lo[3 * k + 2]), new THREE.Vector3(hi[3 * k], hi[3 * k + 1], hi[3 * k + 2])),
      ranges: Array.from({ length: cells.length + 1 }, () => []),
      pick: null,
    });
  }
  // every level, by material then tile, into one buffer (a level keeps at most what the
  // full level has)
  let all = new Uint32Array(sorted.length * (cells.length + 1));
  let at = 0;
  for (let level = 0; level <= cells.length; level++) {
    const rep = level === 0 ? null : yield* representativeSteps(pos, room, info, cells[level - 1]);
    let done = 0;
    for (let m = 0; m < mats.length; m++) {
      const mat = mats[m];
      for (let k = 0; k < ntiles; k++) {
        const b = m * ntiles + k;
        const end = simplify(sorted, counts[b], counts[b + 1] - counts[b], rep, all, at);
        if (end > at) tiles[k].ranges[level].push({ start: at, count: end - at, materialIndex: mat });
        at = end;
        done += counts[b + 1] - counts[b];
        if (done > 3 * STEP) { done = 0; yield; }
      }
    }
  }
  yield;
  const small = pos.length / 3 <= 65535 ? new Uint16Array(at) : null;
  if (small) small.set(all.subarray(0, at)); // typed-array copy: no per-element iteration
  all = small || all.slice(0, at);
  yield;
  // picking: each tile's triangles at full detail, every material
  const Index = pos.length / 3 > 65535 ? Uint32Array : Uint16Array;
  for (let k = 0; k < ntiles; k++) {
    let len = 0;
    for (let m = 0; m < mats.length; m++) len += counts[m * ntiles + k + 1] - counts[m * ntiles + k];
    if (k % 16 === 15) yield;
    const pick = new Index(len);
    let o = 0;
    for (let m = 0; m < mats.length; m++) {
      const b = m * ntiles + k;
      pick.set(sorted.subarray(counts[b], counts[b + 1]), o);
      o += counts[b + 1] - counts[b];
    }
    tiles[k].pick = pick;
  }
  return { index: all, cells, tiles: tiles.filter((t) => isFinite(t.box.min.x)) };
}

// What the vertex shader hands the fragment shader (the same declarations in both).
const VARYINGS = `varying vec3 vWorld;
varying vec3 vColor;
varying float vState;
#ifdef PSDL_MAP
varying vec2 vUv;
#endif`;

// Kept cheap for software renderers: no dynamic indexing of uniform arrays (the role
// colour is a vertex attribute, type visibility a bit mask), no texture fetch (the room's
// state is a vertex attribute, rewritten when the selection or the kind layers change).
const VERTEX = /* glsl */ `
attribute vec2 info;
attribute vec3 roleColor;
attribute float state;
uniform int typeMask;
${VARYINGS}
void main() {
  int t = int(info.y + 0.5);
  if (state > 254.5 || ((typeMask >> t) & 1) == 0) { gl_Position = vec4(2.0, 2.0, 2.0, 1.0); return; }
  vColor = roleColor;
  vState = state;
#ifdef PSDL_MAP
  vUv = uv;
#endif
  vec4 wp = modelMatrix * vec4(position, 1.0);
  vWorld = wp.xyz;
  gl_Position = projectionMatrix * viewMatrix * wp;
}`;

// PSDL_MAP only for materials with an image: a shader that may discard makes SwiftShader
// test depth after shading, so the plain one (most of the city) has none.
const FRAGMENT = /* glsl */ `
#ifdef PSDL_MAP
uniform sampler2D map;
#endif
${VARYINGS}
void main() {
  vec3 n = normalize(cross(dFdx(vWorld), dFdy(vWorld)));
  // flat ground keeps its role colour exactly; walls are shaded by their direction
  float light = 0.6 + 0.4 * abs(n.y) + 0.22 * abs(n.x) * (1.0 - abs(n.y));
  vec3 base = vColor;
#ifdef PSDL_MAP
  vec4 t = texture2D(map, vUv);
  if (t.a < 0.5) discard; // cut-outs (railings, fences)
  base = t.rgb;
#endif
  vec3 col = min(base * light, vec3(1.0));
  if (vState > 0.5 && vState < 1.5) col = mix(col, vec3(1.0, 0.8, 0.1), 0.5);
  else if (vState > 1.5 && vState < 2.5) col = mix(col, vec3(0.15, 0.7, 1.0), 0.4);
  else if (vState > 2.5 && vState < 3.5) col = mix(col, vec3(0.2, 0.85, 0.3), 0.3);
  else if (vState > 3.5) col = col * 0.3;
  gl_FragColor = vec4(col, 1.0);
}`;

/**
 * Coordinates beyond this many metres (a corrupt or hand-edited vertex) are left out of the
 * box the camera frames, as `psdl render` leaves them out of the map (render/init.lua).
 */
export const FRAME_LIMIT = 1e9;

/**
 * The box the camera frames: the bounds of the finite positions (x, y, z flat) within
 * FRAME_LIMIT metres on every axis; a 100 x 10 x 100 m box at the origin when none is.
 */
export function frameBox(pos) {
  let x0 = Infinity, y0 = Infinity, z0 = Infinity, x1 = -Infinity, y1 = -Infinity, z1 = -Infinity;
  for (let i = 0; i + 2 < pos.length; i += 3) {
    const x = pos[i], y = pos[i + 1], z = pos[i + 2];
    // (NaN fails every comparison: left out too)
    if (!(Math.abs(x) <= FRAME_LIMIT && Math.abs(y) <= FRAME_LIMIT && Math.abs(z) <= FRAME_LIMIT)) continue;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
    if (z < z0) z0 = z;
    if (z > z1) z1 = z;
  }
  if (!(x0 <= x1)) return new THREE.Box3(new THREE.Vector3(-50, 0, -50), new THREE.Vector3(50, 10, 50));
  return new THREE.Box3(new THREE.Vector3(x0, y0, z0), new THREE.Vector3(x1, y1, z1));
}

/** Line segments from a flat list of positions (pairs of points). */
function segments(points, color, opts = {}) {
  const geo = new THREE.BufferGeometry();
  geo.setAttribute("position", new THREE.BufferAttribute(points instanceof Float32Array ? points : new Float32Array(points), 3));
  const mat = new THREE.LineBasicMaterial({
    color, transparent: opts.opacity !== undefined, opacity: opts.opacity ?? 1,
    depthTest: opts.depthTest ?? true,
  });
  const lines = new THREE.LineSegments(geo, mat);
  lines.renderOrder = opts.renderOrder ?? 1;
  lines.frustumCulled = false;
  return lines;
}

/**
 * A texture from the texels of one level of a .tex (§9): 1 P8 and 14 PA8 (palette of BGRA),
 * 15 P4 and 16 PA4 (16-colour palette, first texel in the low nibble), 6 ARGB1555, 17 RGB888,
 * 18 RGBA8888. Paletted formats without alpha are drawn opaque.
 */
export function texelTexture(raw, texels, palette) {
  const n = raw.width * raw.height;
  const out = new Uint8Array(n * 4);
  const f = raw.format;
  const pal = (i, o, alpha) => {
    out[o] = palette[4 * i + 2];
    out[o + 1] = palette[4 * i + 1];
    out[o + 2] = palette[4 * i];
    out[o + 3] = alpha ? palette[4 * i + 3] : 255;
  };
  for (let k = 0; k < n; k++) {
    const o = 4 * k;
    if ((f === 1 || f === 14) && palette) pal(texels[k], o, f === 14);
    else if ((f === 15 || f === 16) && palette) pal((texels[k >> 1] >> ((k & 1) * 4)) & 15, o, f === 16);
    else if (f === 6) {
      const v = texels[2 * k] | (texels[2 * k + 1] << 8);
      out[o] = ((v >> 10) & 31) * 255 / 31;
      out[o + 1] = ((v >> 5) & 31) * 255 / 31;
      out[o + 2] = (v & 31) * 255 / 31;
      out[o + 3] = v & 0x8000 ? 255 : 0;
    } else if (f === 17) {
      out[o] = texels[3 * k]; out[o + 1] = texels[3 * k + 1]; out[o + 2] = texels[3 * k + 2]; out[o + 3] = 255;
    } else if (f === 18) {
      out[o] = texels[o]; out[o + 1] = texels[o + 1]; out[o + 2] = texels[o + 2]; out[o + 3] = texels[o + 3];
    } else {
      out[o] = out[o + 2] = 255; out[o + 3] = 255; // magenta: not drawable
    }
  }
  const tex = new THREE.DataTexture(out, raw.width, raw.height, THREE.RGBAFormat, THREE.UnsignedByteType);
  tex.wrapS = raw.clamp_u ? THREE.ClampToEdgeWrapping : THREE.RepeatWrapping;
  tex.wrapT = raw.clamp_v ? THREE.ClampToEdgeWrapping : THREE.RepeatWrapping;
  tex.magFilter = THREE.LinearFilter;
  tex.minFilter = THREE.LinearMipmapLinearFilter;
  tex.generateMipmaps = true;
  tex.needsUpdate = true;
  return tex;
}

export class City {
  constructor(scene) {
    this.scene = scene;
    this.root = new THREE.Group();
    scene.add(this.root);
    // tiles and levels of detail for the camera of each frame
    scene.onBeforeRender = (renderer, _scene, camera) => this.update(camera, renderer.domElement.height);
    this.uniforms = {
      typeMask: { value: 0xffff },
    };
    this.typeOn = new Array(16).fill(true);
    this.kindOn = [true, true, true, true];
    this.overlay = { perimeters: false, links: false, roads: false, problems: true, lanes: true, visibility: false };
    this.typeOn[12] = false; // facade bounds: off at first
    this.uniforms.typeMask.value = this.mask();
    this.selected = 0;
    this.textures = [];
    this.maxLevel = Infinity; // coarsest level of detail used (benchmarks set 0: full detail)
    this.moving = false; // the camera moves: the motion-only levels may be drawn
    this.lodPixels = LOD_PIXELS; // the level rule's pixels (raised in motion by main.js)
    this.frontToBack = false; // draw the tiles nearest first (no gain measured, bench/README.md)
  }

  /** Replace the city with a parsed payload ({meta, buffers}). */
  load(data) {
    this.dispose();
    const { meta, buffers } = data;
    this.meta = meta;
    this.buffers = buffers;
    const nrooms = meta.rooms.length;
    this.verts = buffers.vertices || new Float32Array(0);

    // room state per room and per vertex: 0 plain, 1 selected, 2 neighbour, 3 seen and 4
    // not seen by the selected room (.cpvs), HIDDEN
    this.roomState = new Uint8Array(nrooms + 1);

    const geo = new THREE.BufferGeometry();
    const pos = buffers.position || new Float32Array(0);
    geo.setAttribute("position", new THREE.BufferAttribute(pos, 3));
    geo.setAttribute("room", new THREE.BufferAttribute(buffers.room || new Uint16Array(0), 1));
    geo.setAttribute("info", new THREE.BufferAttribute(buffers.info || new Uint8Array(0), 2));
    // role colours per vertex
    const info = buffers.info || new Uint8Array(0);
    const rc = new Uint8Array((info.length / 2) * 3);
    const table = meta.roles.map((r) => [(r.color >> 16) & 255, (r.color >> 8) & 255, r.color & 255]);
    for (let v = 0, n = info.length / 2; v < n; v++) {
      const c = table[info[2 * v]] || [255, 0, 255];
      rc[3 * v] = c[0]; rc[3 * v + 1] = c[1]; rc[3 * v + 2] = c[2];
    }
    geo.setAttribute("roleColor", new THREE.BufferAttribute(rc, 3, true));
    this.vertexRoom = buffers.room || new Uint16Array(0);
    geo.setAttribute("state", new THREE.BufferAttribute(new Uint8Array(this.vertexRoom.length), 1));
    const uv = buffers.uv || new Float32Array((pos.length / 3) * 2);
    geo.setAttribute("uv", new THREE.BufferAttribute(uv, 2));
    geo.computeBoundingBox();
    this.geometry = geo;

    // one material for the role colours; one per material with an image
    const plain = this.material(null);
    const mats = [plain];
    const matIndex = meta.materials.map((m) => {
      let tex;
      if (m.raw && buffers[m.raw.texels]) {
        tex = texelTexture(m.raw, buffers[m.raw.texels], buffers[m.raw.palette]);
      } else if (m.image) {
        tex = new THREE.TextureLoader().load(m.image, () => { this.onchange?.(); });
        tex.wrapS = tex.wrapT = THREE.RepeatWrapping;
      } else {
        return 0;
      }
      // row 0 of a texture is sampled at v = 0 (§9), as the UVs of psdl.export expect
      tex.flipY = false;
      tex.colorSpace = THREE.NoColorSpace;
      this.textures.push(tex);
      mats.push(this.material(tex));
      return mats.length - 1;
    });
    this.materials = mats;
    // until the levels of detail are ready: the whole index, one draw per material
    const index = buffers.index || new Uint16Array(0);
    geo.setIndex(new THREE.BufferAttribute(index, 1));
    this.fullGroups = meta.groups.map((g) => ({ start: g.start, count: g.count, materialIndex: matIndex[g.material] ?? 0 }));
    geo.groups = this.fullGroups.slice();
    this.mesh = new THREE.Mesh(geo, mats);
    this.mesh.frustumCulled = false; // the tiles are culled in update()
    this.root.add(this.mesh);
    this.levels = null;
    this.pickMeshes = null;
    const generation = (this.generation = (this.generation || 0) + 1);
    // built after the first frame is on screen (a few hundred ms for a London-scale city),
    // in slices of LEVELS_SLICE_MS so that the page keeps drawing and answering input
    const steps = buildLevelSteps(geo, index, this.fullGroups);
    const timing = { started: performance.now(), busy: 0, longest: 0, slices: 0 };
    const slice = () => {
      if (generation !== this.generation) return;
      const t0 = performance.now();
      let r;
      do r = steps.next(); while (!r.done && performance.now() - t0 < LEVELS_SLICE_MS);
      const ms = performance.now() - t0;
      timing.busy += ms;
      timing.longest = Math.max(timing.longest, ms);
      timing.slices += 1;
      if (!r.done) { this.levelsTimer = setTimeout(slice, 0); return; }
      this.levels = r.value;
      this.levels.at = performance.now();
      this.levels.ms = this.levels.at - timing.started; // wall time, slices and gaps
      this.levels.busy = timing.busy; // time spent in the slices
      this.levels.longest = timing.longest; // the longest slice (the page's longest pause)
      this.levels.slices = timing.slices;
      this.pickMeshes = this.levels.tiles.map((t) => {
        const g = new THREE.BufferGeometry();
        for (const [name, attr] of Object.entries(geo.attributes)) g.setAttribute(name, attr);
        g.setIndex(new THREE.BufferAttribute(t.pick, 1));
        g.boundingBox = t.box.clone();
        g.boundingSphere = t.box.getBoundingSphere(new THREE.Sphere());
        return new THREE.Mesh(g, mats[0]);
      });
      geo.setIndex(new THREE.BufferAttribute(this.levels.index, 1));
      this.onchange?.();
    };
    this.levelsTimer = setTimeout(slice, 0);
    this.stats = { drawCalls: 0, triangles: 0, levels: [] };

    // room centres and bounds
    this.box = frameBox(pos);
    this.buildOverlays();
    this.refreshState();
  }

  /**
   * Choose what to draw for a camera (called before every frame): the tiles in view, each
   * at the coarsest level whose cell stays under `lodPixels` pixels (LOD_PIXELS at rest) at
   * the tile's distance, at most REST_LEVELS unless `moving`; contiguous ranges merged into
   * one draw call.
   */
  update(camera, heightPx) {
    this.scalePins(camera, heightPx);
    if (!this.levels || !this.mesh) return;
    const L = this.levels;
    frustum.setFromProjectionMatrix(m4.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse));
    const mpp = (2 * Math.tan((camera.fov * Math.PI) / 360)) / Math.max(1, heightPx); // metres per pixel per metre
    // the tiles in view, in buffer order (ranges merge into few draw calls), or nearest
    // first with frontToBack (hidden pixels of farther tiles could fail the depth test
    // before they are shaded; SwiftShader showed no gain, bench/README.md "Viewer")
    const order = this.order || (this.order = []);
    order.length = 0;
    const used = new Array(L.cells.length + 1).fill(0);
    const coarsest = Math.min(L.cells.length, this.maxLevel, this.moving ? Infinity : REST_LEVELS);
    const lodPx = this.lodPixels || LOD_PIXELS;
    for (let t = 0; t < L.tiles.length; t++) {
      const tile = L.tiles[t];
      if (!frustum.intersectsBox(tile.box)) continue;
      const d = tile.box.distanceToPoint(camera.position);
      const px = Math.max(1e-6, d * mpp);
      let level = 0;
      while (level < coarsest && L.cells[level] <= lodPx * px) level++;
      used[level]++;
      tile.level = level;
      tile.distance = this.frontToBack ? d : 0;
      order.push(tile);
    }
    order.sort((a, b) => a.distance - b.distance || (a.ranges[a.level][0]?.start ?? 0) - (b.ranges[b.level][0]?.start ?? 0));
    const groups = [];
    let tris = 0;
    // per material (three.js draws a mesh's groups of one material in their order), each
    // range appended to the last group when it continues it
    for (const tile of order) {
      for (const r of tile.ranges[tile.level]) {
        tris += r.count / 3;
        let g = null;
        for (let k = groups.length - 1; k >= 0; k--) if (groups[k].materialIndex === r.materialIndex) { g = groups[k]; break; }
        if (g && g.start + g.count === r.start) g.count += r.count;
        else groups.push({ start: r.start, count: r.count, materialIndex: r.materialIndex });
      }
    }
    this.mesh.geometry.groups = groups;
    this.stats = { drawCalls: groups.length, triangles: tris, levels: used };
  }

  /** Scale the problem pins so that each stays at least PIN_PIXELS tall on screen. */
  scalePins(camera, heightPx) {
    const placed = this.placed;
    if (!placed || !placed.length || !this.markers.visible) return;
    const mpp = (2 * Math.tan((camera.fov * Math.PI) / 360)) / Math.max(1, heightPx);
    let changed = false;
    for (let i = 0; i < placed.length; i++) {
      const at = placed[i].at;
      const d = Math.hypot(camera.position.x - at[0], camera.position.y - at[1], camera.position.z - at[2]);
      const s = Math.max(1, (d * mpp * PIN_PIXELS) / PIN_HEIGHT);
      if (Math.abs(s - this.pinScale[i]) < 0.02 * s) continue;
      this.pinScale[i] = s;
      m4.makeScale(s, s, s).setPosition(at[0], at[1], at[2]);
      this.markers.setMatrixAt(i, m4);
      changed = true;
    }
    if (changed) {
      this.markers.instanceMatrix.needsUpdate = true;
      this.markers.boundingSphere = null; // raycasting recomputes it
    }
  }

  /** The problem whose pin is under a ray (null: none, or the pins are hidden). */
  pickProblem(raycaster) {
    if (!this.markers || !this.markers.visible || !this.placed.length) return null;
    const hits = raycaster.intersectObject(this.markers, false);
    return hits.length ? this.placed[hits[0].instanceId] : null;
  }

  material(map) {
    const uniforms = { ...this.uniforms, map: { value: map } };
    return new THREE.ShaderMaterial({
      uniforms, defines: map ? { PSDL_MAP: "" } : {}, vertexShader: VERTEX, fragmentShader: FRAGMENT, side: THREE.DoubleSide,
      polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1,
    });
  }

  vertex(i) {
    const v = this.verts;
    return i >= 0 && 3 * i + 2 < v.length ? new THREE.Vector3(v[3 * i], v[3 * i + 1], v[3 * i + 2]) : null;
  }

  center(id) {
    const r = this.meta.rooms[id - 1];
    return r ? new THREE.Vector3(r.center[0], r.center[1], r.center[2]) : null;
  }

  buildOverlays() {
    const meta = this.meta;
    const lift = 0.25;
    // every perimeter
    const per = [];
    for (const r of meta.rooms) {
      const p = r.perimeter;
      for (let k = 0; k < p.length; k++) {
        const a = this.vertex(p[k]), b = this.vertex(p[(k + 1) % p.length]);
        if (a && b) per.push(a.x, a.y + lift, a.z, b.x, b.y + lift, b.z);
      }
    }
    this.perimeters = segments(per, 0x202020, { opacity: 0.45 });
    // every neighbour link (once per pair), centre to centre
    const links = [];
    for (const r of meta.rooms) {
      for (const n of r.neighbours) {
        if (n > r.id && meta.rooms[n - 1]) {
          const a = r.center, b = meta.rooms[n - 1].center;
          links.push(a[0], a[1] + 1.5, a[2], b[0], b[1] + 1.5, b[2]);
        }
      }
    }
    this.links = segments(links, 0x1a5fb4, { opacity: 0.7 });
    // road-record paths through their rooms' centres
    const roads = [], colors = [];
    const col = new THREE.Color();
    meta.roads.forEach((rec, k) => {
      col.setHSL((k * 0.137) % 1, 0.85, 0.45);
      const ids = rec.rooms.map((x) => Math.abs(x)).filter((x) => meta.rooms[x - 1]);
      for (let i = 0; i + 1 < ids.length; i++) {
        const a = meta.rooms[ids[i] - 1].center, b = meta.rooms[ids[i + 1] - 1].center;
        roads.push(a[0], a[1] + 2.5, a[2], b[0], b[1] + 2.5, b[2]);
        colors.push(col.r, col.g, col.b, col.r, col.g, col.b);
      }
    });
    this.roadPaths = segments(roads, 0xffffff, {});
    this.roadPaths.geometry.setAttribute("color", new THREE.BufferAttribute(new Float32Array(colors), 3));
    this.roadPaths.material.vertexColors = true;
    // facade bounds
    const fb = this.buffers.facade_bounds || new Float32Array(0);
    const fbl = [];
    for (let i = 0; i + 11 < fb.length; i += 12) {
      for (let e = 0; e < 4; e++) {
        const a = e * 3, b = ((e + 1) % 4) * 3;
        fbl.push(fb[i + a], fb[i + a + 1], fb[i + a + 2], fb[i + b], fb[i + b + 1], fb[i + b + 2]);
      }
    }
    this.facadeBounds = segments(fbl, 0x8a4fff, { opacity: 0.8 });
    // AI lanes of the package (.bai), lifted over the road
    const lanes = this.buffers.lanes || new Float32Array(0);
    const ll = new Float32Array(lanes);
    for (let i = 1; i < ll.length; i += 3) ll[i] += 0.6;
    this.lanes = segments(ll, 0xff00aa, { renderOrder: 3 });
    // problem markers: a pin per placed problem, kept at least PIN_PIXELS tall on screen
    // (update()) so that it can be seen and clicked at any distance
    const placed = meta.problems.filter((p) => Array.isArray(p.at));
    this.placed = placed;
    const cone = new THREE.ConeGeometry(PIN_WIDTH / 2, PIN_HEIGHT, 8);
    cone.rotateX(Math.PI);
    cone.translate(0, PIN_HEIGHT / 2 + 0.5, 0);
    this.markers = new THREE.InstancedMesh(cone, new THREE.MeshBasicMaterial({ depthTest: false, transparent: true, opacity: 0.95 }), Math.max(1, placed.length));
    this.markers.count = placed.length;
    this.markers.renderOrder = 5;
    this.pinScale = new Float32Array(placed.length).fill(1);
    placed.forEach((p, i) => {
      this.markers.setMatrixAt(i, m4.makeTranslation(p.at[0], p.at[1], p.at[2]));
      this.markers.setColorAt(i, new THREE.Color(p.severity === "error" ? 0xe0201b : 0xf59e0b));
    });
    this.markers.frustumCulled = false;
    this.selection = new THREE.Group();
    for (const o of [this.perimeters, this.links, this.roadPaths, this.facadeBounds, this.lanes, this.markers, this.selection]) this.root.add(o);
    this.applyOverlays();
  }

  applyOverlays() {
    if (!this.perimeters) return;
    this.perimeters.visible = this.overlay.perimeters;
    this.links.visible = this.overlay.links;
    this.roadPaths.visible = this.overlay.roads;
    this.markers.visible = this.overlay.problems;
    this.lanes.visible = this.overlay.lanes;
    this.facadeBounds.visible = this.typeOn[12];
  }

  mask() {
    return this.typeOn.reduce((m, on, i) => (on ? m | (1 << i) : m), 0);
  }

  setType(t, on) {
    this.typeOn[t] = on;
    this.uniforms.typeMask.value = this.mask();
    this.applyOverlays();
  }

  setKind(k, on) {
    this.kindOn[k] = on;
    this.refreshState();
  }

  setOverlay(name, on) {
    this.overlay[name] = on;
    this.applyOverlays();
    if (name === "visibility") this.refreshState();
  }

  /** The rooms a room sees (.cpvs of the package), or null without one. */
  visibleFrom(id) {
    const ids = this.buffers.cpvs_ids, off = this.buffers.cpvs_offsets;
    if (!ids || !off || id < 1 || id >= off.length) return null;
    return ids.subarray(off[id - 1], off[id]);
  }

  roomVisible(id) {
    const r = this.meta.rooms[id - 1];
    return !!r && this.kindOn[r.kind];
  }

  refreshState() {
    if (!this.meta) return;
    const st = this.roomState;
    st.fill(0);
    const sel = this.meta.rooms[this.selected - 1];
    const nbs = new Set(sel ? sel.neighbours.filter((n) => n > 0) : []);
    const seen = sel && this.overlay.visibility ? this.visibleFrom(sel.id) : null;
    const sees = seen ? new Set(seen) : null;
    for (const r of this.meta.rooms) {
      st[r.id] = !this.kindOn[r.kind] ? HIDDEN
        : r.id === this.selected ? 1 : sees ? (sees.has(r.id) ? 3 : 4) : nbs.has(r.id) ? 2 : 0;
    }
    const attr = this.geometry.getAttribute("state");
    const out = attr.array, room = this.vertexRoom;
    for (let v = 0; v < out.length; v++) out[v] = st[room[v]];
    attr.needsUpdate = true;
  }

  /** Select a room (0: none): highlight, perimeter, links to its neighbours. */
  select(id) {
    this.selected = this.meta.rooms[id - 1] ? id : 0;
    this.refreshState();
    for (const c of [...this.selection.children]) {
      this.selection.remove(c);
      c.geometry.dispose();
      c.material.dispose();
    }
    const r = this.meta.rooms[this.selected - 1];
    if (!r) return;
    const per = [];
    const p = r.perimeter;
    for (let k = 0; k < p.length; k++) {
      const a = this.vertex(p[k]), b = this.vertex(p[(k + 1) % p.length]);
      if (a && b) per.push(a.x, a.y + 0.3, a.z, b.x, b.y + 0.3, b.z);
    }
    this.selection.add(segments(per, 0xff3b00, { depthTest: false, renderOrder: 4 }));
    const links = [];
    for (const n of r.neighbours) {
      const o = this.meta.rooms[n - 1];
      if (o) links.push(r.center[0], r.center[1] + 2, r.center[2], o.center[0], o.center[1] + 2, o.center[2]);
    }
    this.selection.add(segments(links, 0x0050ff, { depthTest: false, renderOrder: 4 }));
  }

  /** The room under a ray (hidden rooms and types skipped), or 0. */
  pick(raycaster) {
    if (!this.mesh) return { room: 0 };
    // the full level: per tile once the tiles are built, else the whole mesh
    const hits = raycaster.intersectObjects(this.pickMeshes || [this.mesh], false);
    const room = this.geometry.getAttribute("room").array;
    const info = this.geometry.getAttribute("info").array;
    for (const h of hits) {
      const v = h.face.a;
      const id = room[v];
      if (this.roomVisible(id) && this.typeOn[info[2 * v + 1]]) return { room: id, point: h.point };
    }
    return { room: 0 };
  }

  dispose() {
    for (const c of [...this.root.children]) {
      this.root.remove(c);
      c.traverse?.((o) => {
        o.geometry?.dispose();
        if (Array.isArray(o.material)) o.material.forEach((m) => m.dispose());
        else o.material?.dispose();
      });
    }
    for (const t of this.textures) t.dispose();
    this.textures = [];
    for (const m of this.pickMeshes || []) m.geometry.dispose();
    clearTimeout(this.levelsTimer);
    this.generation = (this.generation || 0) + 1;
    this.pickMeshes = null;
    this.levels = null;
    this.mesh = null;
    this.perimeters = null;
  }
}

export { list };

// The levels of detail (viewer/src/city.js buildLevelSteps, lod.js) on a hand-made ground:
// 150 x 150 quads of 1 m (45,000 triangles, rooms of 10 x 10 quads). The page builds them in
// slices between frames; run step by step they must give exactly what one run gives.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as THREE from "three";
import { buildLevels, buildLevelSteps, LOD_CELLS } from "../src/city.js";

const N = 150, Q = 1;
const room = [], info = [], index = [];
// one vertex per point and room: a room's quads own their corners
const verts = new Map();
function vertex(i, j, r) {
  const key = `${i},${j},${r}`;
  if (!verts.has(key)) {
    verts.set(key, room.length);
    room.push(r);
    info.push(0, 0);
  }
  return verts.get(key);
}
const p = [];
for (let j = 0; j < N; j++) {
  for (let i = 0; i < N; i++) {
    const r = 1 + Math.floor(i / 10) + 15 * Math.floor(j / 10);
    const a = vertex(i, j, r), b = vertex(i + 1, j, r), c = vertex(i + 1, j + 1, r), d = vertex(i, j + 1, r);
    index.push(a, b, c, a, c, d);
  }
}
for (const [key] of verts) {
  const [i, j] = key.split(",").map(Number);
  p.push(i * Q, 0.1 * Math.sin(i + j), j * Q);
}
const geo = new THREE.BufferGeometry();
geo.setAttribute("position", new THREE.BufferAttribute(new Float32Array(p), 3));
geo.setAttribute("room", new THREE.BufferAttribute(new Uint16Array(room), 1));
geo.setAttribute("info", new THREE.BufferAttribute(new Uint8Array(info), 2));
geo.computeBoundingBox();
const idx = new Uint32Array(index);
const groups = [{ start: 0, count: idx.length, materialIndex: 0 }];

test("the levels of detail built in steps equal one run, and the steps are many", () => {
  const steps = buildLevelSteps(geo, idx, groups);
  let r, yields = 0;
  while (!(r = steps.next()).done) yields++;
  const stepped = r.value, whole = buildLevels(geo, idx, groups);
  assert.ok(yields >= 20, `the work is cut into steps (${yields} yields)`);
  assert.deepEqual(Array.from(stepped.index), Array.from(whole.index));
  assert.equal(stepped.tiles.length, whole.tiles.length);
  stepped.tiles.forEach((t, k) => {
    assert.deepEqual(t.ranges, whole.tiles[k].ranges);
    assert.deepEqual(Array.from(t.pick), Array.from(whole.tiles[k].pick));
  });
  // full level: every triangle once; each coarser level has fewer
  const tris = (level) => stepped.tiles.reduce((n, t) => n + t.ranges[level].reduce((m, g) => m + g.count / 3, 0), 0);
  assert.equal(tris(0), index.length / 3);
  for (let l = 1; l <= LOD_CELLS.length; l++) assert.ok(tris(l) < tris(l - 1), `level ${l}: ${tris(l)} < ${tris(l - 1)}`);
  assert.ok(tris(1) > 0);
});

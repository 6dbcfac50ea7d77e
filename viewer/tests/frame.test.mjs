// The box the camera frames (viewer/src/city.js frameBox): a far-off vertex (a corrupt or
// hand-edited file, newcomer F4) must not stretch it, as it does not stretch psdl render's map.
import { test } from "node:test";
import assert from "node:assert/strict";
import { frameBox, FRAME_LIMIT } from "../src/city.js";

test("frameBox: the bounds of the positions", () => {
  const b = frameBox(new Float32Array([0, 0, 0, 100, 5, -20, -10, 2, 40]));
  assert.deepEqual([b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z], [-10, 0, -20, 100, 5, 40]);
});

test("frameBox: far-off, infinite and NaN positions are left out (psdl render's rule)", () => {
  const pos = new Float32Array([0, 0, 0, 3e38, 0, -3e38, 100, 5, 100, NaN, 0, 0, 0, Infinity, 0, 50, 0, -2e9]);
  const b = frameBox(pos);
  assert.deepEqual([b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z], [0, 0, 0, 100, 5, 100]);
  // a point at the limit still counts
  const c = frameBox(new Float32Array([0, 0, 0, FRAME_LIMIT, 0, 0]));
  assert.equal(c.max.x, FRAME_LIMIT);
});

test("frameBox: nothing to frame gives a 100 m box at the origin", () => {
  for (const pos of [new Float32Array(0), new Float32Array([3e38, 0, 0])]) {
    const b = frameBox(pos);
    assert.deepEqual([b.min.x, b.min.z, b.max.x, b.max.z], [-50, -50, 50, 50]);
  }
});

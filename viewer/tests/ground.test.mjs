// The drive camera's ground and walls (viewer/src/ground.js) on a hand-made scene: a road
// 40 x 10 m at y = 0, a facade across it at x = 10 (10 m high), a kerb-high face at x = -10
// (0.2 m) and a bridge wall high above the road at x = -15 (from 5 to 8 m).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Ground, WALL_GAP } from "../src/ground.js";

const roles = [{ name: "road" }, { name: "facade" }];
const pos = [], info = [], index = [];
function quad(role, a, b, c, d) {
  const n = pos.length / 3;
  for (const p of [a, b, c, d]) { pos.push(...p); info.push(role, 0); }
  index.push(n, n + 1, n + 2, n, n + 2, n + 3);
}
quad(0, [-20, 0, -5], [20, 0, -5], [20, 0, 5], [-20, 0, 5]);
quad(1, [10, 0, -5], [10, 0, 5], [10, 10, 5], [10, 10, -5]);
quad(1, [-10, 0, -5], [-10, 0, 5], [-10, 0.2, 5], [-10, 0.2, -5]);
quad(1, [-15, 5, -5], [-15, 5, 5], [-15, 8, 5], [-15, 8, -5]);
const ground = new Ground({ roles }, { position: new Float32Array(pos), info: new Uint8Array(info), index: new Uint16Array(index) });

test("the road's height is found; nothing to drive on outside it", () => {
  assert.equal(ground.height(0, 0, 0), 0);
  assert.equal(ground.height(0, 30, 0), null);
});

test("a facade across the way stops the camera short of it, from either side", () => {
  assert.equal(ground.blocked(0, 0, 11, 0, 0), true, "through the wall");
  assert.equal(ground.blocked(0, 0, 10 - WALL_GAP + 0.05, 0, 0), true, "closer than the gap");
  assert.equal(ground.blocked(0, 0, 10 - WALL_GAP - 0.05, 0, 0), false, "short of the gap");
  assert.equal(ground.blocked(15, 0, 9, 0, 0), true, "from the other side");
  assert.equal(ground.blocked(9, -4, 9, 4, 0), false, "along it");
});

test("a kerb-high face and a wall high above the road do not stop it", () => {
  assert.equal(ground.blocked(-5, 0, -12, 0, 0), false, "kerb");
  assert.equal(ground.blocked(-12, 0, -18, 0, 0), false, "bridge wall 5 m up");
  assert.equal(ground.blocked(-12, 0, -18, 0, 4.5), true, "the same wall for a camera on the bridge's level");
});

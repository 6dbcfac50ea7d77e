// The motion quality controller (viewer/src/quality.js) fed with frame times: a slow renderer
// is walked down to the floor, a fast one climbs to full resolution, a step that failed is
// retried only after longer runs of fitting frames, and rest breaks the chain of intervals.
import { test } from "node:test";
import assert from "node:assert/strict";
import { MotionQuality, MOTION_STEPS, START_STEP, SLOW_MS, FIT_MS } from "../src/quality.js";

/** Feed `n` chained frames `ms` apart; returns the steps drawn at. */
function run(q, n, ms, t0 = 0) {
  const steps = [];
  let t = t0;
  for (let i = 0; i < n; i++) {
    const s = q.frame(t, i > 0);
    steps.push(MOTION_STEPS.indexOf(s));
    t += typeof ms === "function" ? ms(MOTION_STEPS.indexOf(s)) : ms;
  }
  return steps;
}

test("frames far over 60 frames/s walk the steps down to the floor, skipping steps when far too slow", () => {
  const q = new MotionQuality();
  assert.equal(q.step, START_STEP);
  const steps = run(q, 40, 90); // 11 frames/s: a London-scale city at half resolution, busy machine
  assert.equal(q.step, MOTION_STEPS.length - 1);
  // 90 ms is over 5 display frames: the first decision jumps 3 steps
  const firstChange = steps.findIndex((s) => s !== START_STEP);
  assert.equal(steps[firstChange], START_STEP + 3);
  assert.ok(firstChange <= 7, `first step down after ${firstChange} frames`);
  // the floor is kept: coarser than any other step
  const floor = MOTION_STEPS[MOTION_STEPS.length - 1];
  for (const s of MOTION_STEPS) assert.ok(floor.scale <= s.scale && floor.lodPixels >= s.lodPixels);
});

test("frames that fit climb to full resolution; a step that failed is retried after a longer run", () => {
  const q = new MotionQuality();
  run(q, 200, 1000 / 60); // a GPU: every frame on time
  assert.equal(q.step, 0);
  assert.equal(MOTION_STEPS[0].scale, 1);
  // a renderer that fits at step 3 and is too slow at step 2
  const q2 = new MotionQuality();
  const cost = (s) => (s >= 3 ? 1000 / 60 : 30);
  const steps = run(q2, 600, cost);
  const at = (i) => steps.slice(i).filter((s) => s === 2).length;
  assert.ok(steps.slice(-50).every((s) => s >= 2), "settles around step 3");
  // the tries of step 2 get rarer: more frames at step 2 in the first half than in the second
  assert.ok(at(0) - at(300) > at(300), `tries at step 2: ${at(0) - at(300)} then ${at(300)}`);
  assert.ok(q2.failed[2] >= 2);
});

test("intervals across a rest are not measured; a pinned step is kept", () => {
  const q = new MotionQuality();
  // slow gaps, but never two motion frames in a row: no decision
  let t = 0;
  for (let i = 0; i < 50; i++) { q.frame(t, false); q.rest(); t += 500; }
  assert.equal(q.step, START_STEP);
  q.fixed = 4;
  assert.equal(run(q, 30, 200).every((s) => s === 4), true);
  assert.ok(SLOW_MS > FIT_MS);
});

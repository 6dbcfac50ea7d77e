// The picture's quality while the camera moves: a controller that watches the time between
// the frames drawn in motion and lowers the pixel ratio, then coarsens the levels of detail,
// until a frame fits the display's 60 frames per second or the floor is reached; it climbs
// back when frames keep fitting. At rest the page draws at full resolution and detail
// (main.js), so the controller changes only the moving picture. In a software renderer a
// frame costs about its triangles plus its pixels (bench/README.md "Viewer"); on a GPU the
// frames fit at once and the controller climbs to full resolution.

/**
 * The steps, finest first: `scale` multiplies the page's pixel ratio, `lodPixels` is the
 * number of pixels a level's cell may cover (city.js: 2.5 at rest; more drops sub-pixel
 * detail: kerbs, crosswalks, facade repeats of farther tiles go to coarser levels).
 */
export const MOTION_STEPS = [
  { scale: 1, lodPixels: 2.5 },
  { scale: 0.5, lodPixels: 2.5 },
  { scale: 0.4, lodPixels: 2.5 },
  { scale: 0.33, lodPixels: 2.5 },
  { scale: 0.25, lodPixels: 2.5 },
  { scale: 0.25, lodPixels: 4 },
  { scale: 0.25, lodPixels: 6 },
];
/** The step the first motion starts at (half resolution, as the page did before). */
export const START_STEP = 1;
/** Frame interval (ms) above which the frames at a step are too slow: 1.25 display frames. */
export const SLOW_MS = 1.25 * (1000 / 60);
/** Frame interval (ms) at or under which a frame fitted the display's 60 frames/s. */
export const FIT_MS = 1.1 * (1000 / 60);
/** Intervals whose median decides a step down (frames already queued are skipped first). */
const WINDOW = 4;
/** Fitting frames in a row before a finer step is tried (doubled each time that step failed). */
const CLIMB = 30;

export class MotionQuality {
  constructor() {
    this.step = START_STEP;
    this.fixed = null; // a step index pins the step (benchmarks); null: adapt
    this.intervals = [];
    this.atStep = 0; // frames drawn at this step
    this.fitting = 0; // intervals in a row that fitted
    this.failed = new Array(MOTION_STEPS.length).fill(0); // times each step was left as too slow
    this.last = null; // time of the last frame drawn in motion
    this.changes = 0; // steps taken (down and up), for benchmarks
  }

  /**
   * A frame is about to be drawn in motion at time `now` (ms, the animation frame's time);
   * `chained` says the previous animation frame drew in motion too, so that the interval
   * between them is one frame's cost. Returns the step ({ scale, lodPixels }) to draw at.
   */
  frame(now, chained) {
    if (this.fixed !== null) return MOTION_STEPS[Math.max(0, Math.min(MOTION_STEPS.length - 1, this.fixed))];
    if (chained && this.last !== null) this.measure(now - this.last);
    else this.fitting = 0;
    this.last = now;
    this.atStep += 1;
    return MOTION_STEPS[this.step];
  }

  /** One interval (ms) between two frames drawn in motion, one after the other. */
  measure(ms) {
    const iv = this.intervals;
    // the first frames at a new step still include what was queued at the step before
    if (this.atStep > 1) iv.push(ms);
    if (iv.length > WINDOW) iv.shift();
    this.fitting = ms <= FIT_MS ? this.fitting + 1 : 0;
    if (iv.length === WINDOW && this.step < MOTION_STEPS.length - 1) {
      const sorted = iv.slice().sort((a, b) => a - b);
      const median = (sorted[WINDOW / 2 - 1] + sorted[WINDOW / 2]) / 2;
      if (median > SLOW_MS) {
        // far too slow (a software renderer's first drag): skip steps, one per display
        // frame the median is over
        const down = Math.max(1, Math.min(3, Math.floor(median / (1000 / 60)) - 1));
        this.failed[this.step] += 1;
        this.go(Math.min(MOTION_STEPS.length - 1, this.step + down));
        return;
      }
    }
    if (this.step > 0 && this.fitting >= CLIMB << Math.min(6, this.failed[this.step - 1])) this.go(this.step - 1);
  }

  go(step) {
    this.step = step;
    this.intervals.length = 0;
    this.atStep = 0;
    this.fitting = 0;
    this.changes += 1;
  }

  /** The camera came to rest: the next motion's first interval is not a frame's cost. */
  rest() {
    this.last = null;
    this.intervals.length = 0;
    this.fitting = 0;
  }
}

// Camera navigation: orbit (three's OrbitControls), fly (drag to look, keys to move), drive
// (eye height over the drivable surface, stopped by walls, keys for speed and steering), top view, and
// animated flights to a point.
import * as THREE from "three";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";

export const EYE_HEIGHT = 1.6; // metres above the road for the drive camera

export class Navigation {
  constructor(camera, dom) {
    this.camera = camera;
    this.dom = dom;
    this.orbit = new OrbitControls(camera, dom);
    this.orbit.enableDamping = false;
    this.orbit.screenSpacePanning = true;
    this.orbit.maxPolarAngle = Math.PI * 0.499;
    this.mode = "orbit";
    this.keys = new Set();
    this.yaw = 0;
    this.pitch = 0;
    this.speed = 0;
    this.flight = null;
    this.ground = null;
    this.onchange = () => {};
    window.addEventListener("keydown", (e) => {
      if (e.target instanceof HTMLInputElement) return;
      this.keys.add(e.key.toLowerCase());
    });
    window.addEventListener("keyup", (e) => this.keys.delete(e.key.toLowerCase()));
    window.addEventListener("blur", () => this.keys.clear());
    let drag = null;
    dom.addEventListener("pointerdown", (e) => {
      if (this.mode !== "orbit") drag = { x: e.clientX, y: e.clientY };
    });
    window.addEventListener("pointermove", (e) => {
      if (!drag) return;
      this.yaw -= (e.clientX - drag.x) * 0.005;
      this.pitch = Math.max(-1.5, Math.min(1.5, this.pitch - (e.clientY - drag.y) * 0.005));
      drag = { x: e.clientX, y: e.clientY };
    });
    window.addEventListener("pointerup", () => { drag = null; });
  }

  setMode(mode, ground) {
    if (mode === this.mode) return;
    const cam = this.camera;
    if (mode === "orbit") {
      // orbit around the point ahead of the camera
      const dir = new THREE.Vector3();
      cam.getWorldDirection(dir);
      this.orbit.target.copy(cam.position).addScaledVector(dir, 60);
      this.orbit.enabled = true;
      cam.up.set(0, 1, 0);
      this.orbit.update();
    } else {
      this.orbit.enabled = false;
      const dir = new THREE.Vector3();
      cam.getWorldDirection(dir);
      this.yaw = Math.atan2(-dir.x, -dir.z);
      this.pitch = mode === "drive" ? 0 : Math.asin(Math.max(-1, Math.min(1, dir.y)));
      if (mode === "drive") {
        this.ground = ground;
        this.speed = 0;
        const at = this.orbit.target;
        const p = ground && ground.nearestRoad(at.x, at.z);
        if (p) cam.position.set(p[0], p[1] + EYE_HEIGHT, p[2]);
      }
    }
    this.flight = null;
    this.mode = mode;
    this.onchange(mode);
  }

  /** Fly (animated) so that `point` is in view from `distance` metres. */
  flyTo(point, distance = 80, ms = 600) {
    if (this.mode !== "orbit") this.setMode("orbit");
    const cam = this.camera;
    const offset = cam.position.clone().sub(this.orbit.target);
    if (offset.length() < 1e-6) offset.set(0, 1, 1);
    offset.setLength(distance);
    if (offset.y < distance * 0.35) offset.y = distance * 0.35;
    offset.setLength(distance);
    this.flight = {
      t0: performance.now(), ms,
      fromT: this.orbit.target.clone(), toT: point.clone(),
      fromP: cam.position.clone(), toP: point.clone().add(offset),
    };
  }

  /** Look straight down on the orbit target (north up). */
  topView() {
    if (this.mode !== "orbit") this.setMode("orbit");
    this.flight = null;
    const d = this.camera.position.distanceTo(this.orbit.target);
    this.camera.position.set(this.orbit.target.x, this.orbit.target.y + d, this.orbit.target.z + d * 1e-4);
    this.orbit.update();
  }

  /** Set the orbit view directly (used when a city loads, and by tests). */
  view(target, position) {
    if (this.mode !== "orbit") this.setMode("orbit");
    this.flight = null;
    this.orbit.target.copy(target);
    this.camera.position.copy(position);
    this.orbit.update();
  }

  update(dt) {
    const cam = this.camera;
    if (this.flight) {
      const f = this.flight;
      let t = Math.min(1, (performance.now() - f.t0) / f.ms);
      const s = t * t * (3 - 2 * t);
      this.orbit.target.lerpVectors(f.fromT, f.toT, s);
      cam.position.lerpVectors(f.fromP, f.toP, s);
      if (t >= 1) this.flight = null;
      this.orbit.update();
      return true;
    }
    if (this.mode === "orbit") {
      this.orbit.update();
      return false;
    }
    const k = this.keys;
    const fwd = new THREE.Vector3(-Math.sin(this.yaw), 0, -Math.cos(this.yaw));
    const right = new THREE.Vector3(-fwd.z, 0, fwd.x);
    let moved = false;
    if (this.mode === "fly") {
      const v = (k.has("shift") ? 150 : 30) * dt;
      const look = new THREE.Vector3(fwd.x * Math.cos(this.pitch), Math.sin(this.pitch), fwd.z * Math.cos(this.pitch));
      if (k.has("w") || k.has("arrowup")) { cam.position.addScaledVector(look, v); moved = true; }
      if (k.has("s") || k.has("arrowdown")) { cam.position.addScaledVector(look, -v); moved = true; }
      if (k.has("a") || k.has("arrowleft")) { cam.position.addScaledVector(right, -v); moved = true; }
      if (k.has("d") || k.has("arrowright")) { cam.position.addScaledVector(right, v); moved = true; }
      if (k.has("e")) { cam.position.y += v; moved = true; }
      if (k.has("q")) { cam.position.y -= v; moved = true; }
    } else {
      // drive: W/S change speed, A/D steer (faster turns when slow), follow the surface
      if (k.has("w") || k.has("arrowup")) this.speed = Math.min(40, this.speed + 12 * dt);
      else if (k.has("s") || k.has("arrowdown")) this.speed = Math.max(-8, this.speed - 20 * dt);
      else {
        this.speed *= Math.pow(0.6, dt);
        if (Math.abs(this.speed) < 0.05) this.speed = 0; // stopped: the view stays still and is not redrawn
      }
      const steer = (k.has("a") || k.has("arrowleft") ? 1 : 0) - (k.has("d") || k.has("arrowright") ? 1 : 0);
      this.yaw += steer * dt * 1.2;
      const next = cam.position.clone().addScaledVector(fwd, this.speed * dt);
      const road = cam.position.y - EYE_HEIGHT;
      // stop at walls (facades, tunnel walls) and where there is nothing to drive on
      const wall = this.ground && this.ground.blocked(cam.position.x, cam.position.z, next.x, next.z, road);
      const y = this.ground && !wall ? this.ground.height(next.x, next.z, road) : null;
      if (y !== null) { next.y = y + EYE_HEIGHT; cam.position.copy(next); } else { this.speed = 0; }
      moved = true;
    }
    const look = new THREE.Vector3(fwd.x * Math.cos(this.pitch), Math.sin(this.pitch), fwd.z * Math.cos(this.pitch));
    cam.up.set(0, 1, 0);
    cam.lookAt(cam.position.clone().add(look));
    return moved;
  }

  /** Distance at which the scale bar is measured (orbit target, or 50 m ahead). */
  focusDistance() {
    return this.mode === "orbit" ? this.camera.position.distanceTo(this.orbit.target) : 50;
  }
}

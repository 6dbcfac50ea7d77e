// Headless Chromium (Debian's, through puppeteer-core) for the browser tests and the
// viewer benchmark.
import puppeteer from "puppeteer-core";
import { existsSync } from "node:fs";

/** The Chromium binary: $PSDL_CHROMIUM, else Debian's. */
export function chromiumPath() {
  const candidates = [process.env.PSDL_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error("Chromium not found (install Debian's chromium, or set PSDL_CHROMIUM)");
  return found;
}

/**
 * Flags for WebGL on Chromium's software renderer: headless Chromium without a GPU draws
 * WebGL with SwiftShader (ANGLE over SwiftShader's Vulkan) and composites the page in
 * software. `--use-angle=swiftshader` would also move the page's compositing onto
 * SwiftShader, which costs 30-45 ms of CPU per frame even for an empty scene (bench/README.md
 * "Viewer"), so it is not given.
 */
export const SWIFTSHADER = ["--enable-unsafe-swiftshader"];

/**
 * Start headless Chromium with WebGL on its software renderer (SwiftShader). Benchmarks may
 * pass other GPU flags (`gpu`, replacing SWIFTSHADER) and another window size (CSS pixels).
 */
export async function launch({ gpu = SWIFTSHADER, width = 1280, height = 800 } = {}) {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", ...gpu, "--disable-dev-shm-usage", `--window-size=${width},${height}`],
    defaultViewport: { width, height },
  });
}

/**
 * Open a page and wait until the viewer has drawn its first frame. Returns { page, errors }:
 * errors collects console errors and page errors from the start.
 */
export async function openViewer(browser, url, { timeout = 120000 } = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeout); // a busy machine draws slowly
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("page: " + e.message));
  page.on("requestfailed", (r) => errors.push("request failed: " + r.url()));
  await page.goto(url, { waitUntil: "load", timeout });
  await page.waitForFunction(() => window.psdlViewer && (window.psdlViewer.ready || window.psdlViewer.errors.length), { timeout });
  return { page, errors };
}

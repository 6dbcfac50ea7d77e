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

/** Start headless Chromium with WebGL on its software renderer (SwiftShader). */
export async function launch() {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
      "--disable-dev-shm-usage", "--window-size=1280,800"],
    defaultViewport: { width: 1280, height: 800 },
  });
}

/**
 * Open a page and wait until the viewer has drawn its first frame. Returns { page, errors }:
 * errors collects console errors and page errors from the start.
 */
export async function openViewer(browser, url, { timeout = 30000 } = {}) {
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("page: " + e.message));
  page.on("requestfailed", (r) => errors.push("request failed: " + r.url()));
  await page.goto(url, { waitUntil: "load", timeout });
  await page.waitForFunction(() => window.psdlViewer && (window.psdlViewer.ready || window.psdlViewer.errors.length), { timeout });
  return { page, errors };
}

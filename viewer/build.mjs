// Build the page template of `psdl view`: bundle src/main.js with three.js (from
// node_modules, installed by `npm ci`) using esbuild, and inline it with src/viewer.css into
// src/template.html. The result is one HTML file with the marker <!--PSDL:DATA--> where
// lua/psdl/view.lua puts the city.
//
//   node viewer/build.mjs OUT.html
import { build } from "esbuild";
import { readFileSync, writeFileSync, renameSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error("usage: node viewer/build.mjs OUT.html");
  process.exit(1);
}

const result = await build({
  entryPoints: [join(here, "src", "main.js")],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  write: false,
  legalComments: "none",
  logLevel: "warning",
});
const js = result.outputFiles[0].text;
if (/<\/script/i.test(js)) throw new Error("bundle contains </script: cannot be inlined");
const css = readFileSync(join(here, "src", "viewer.css"), "utf8");
const template = readFileSync(join(here, "src", "template.html"), "utf8");
for (const marker of ["/*PSDL:CSS*/", "/*PSDL:JS*/", "<!--PSDL:DATA-->"]) {
  if (!template.includes(marker)) throw new Error(`template.html lacks ${marker}`);
}
// replace with functions: the bundle holds `$&`-like sequences a string replacement would expand
const html = template.replace("/*PSDL:CSS*/", () => css).replace("/*PSDL:JS*/", () => js);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out + ".tmp", html);
renameSync(out + ".tmp", out);
console.log(`viewer: ${out} (${(html.length / 1024).toFixed(0)} KiB)`);

// Copies what the offline web page (allfives/web/static/offline.html) needs from outside the
// package's sources into allfives/web/static/vendor/ (gitignored): onnxruntime-web's wasm build
// from node_modules (ort.wasm.min.mjs, its loader ort-wasm-simd-threaded.mjs and the .wasm) and the
// shipped policies models/allfives_{2,3,4}p.onnx; and axe-core's axe.min.js, which the browser tests
// inject into the page to check its accessibility (tests/test_web_play_browser.py). Run by `npm ci` (the postinstall script of
// package.json), so `make install` leaves the folder ready; the wheel and the sdist carry it
// (pyproject.toml package-data, MANIFEST.in). No network: node_modules must be installed.
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "node_modules", "onnxruntime-web", "dist");
const vendor = join(root, "allfives", "web", "static", "vendor");
const ORT_FILES = ["ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm"];

if (!existsSync(dist)) {
  console.error(`vendor_web: ${dist} is missing; run npm ci first`);
  process.exit(1);
}
mkdirSync(join(vendor, "models"), { recursive: true });
for (const name of ORT_FILES) copyFileSync(join(dist, name), join(vendor, name));
const models = readdirSync(join(root, "models")).filter((name) => /^allfives_\dp\.onnx$/.test(name));
for (const name of models) copyFileSync(join(root, "models", name), join(vendor, "models", name));
const axe = join(root, "node_modules", "axe-core", "axe.min.js");
if (existsSync(axe)) copyFileSync(axe, join(vendor, "axe.min.js"));
console.log(`vendor_web: ${ORT_FILES.length} onnxruntime-web files, ${models.length} models${existsSync(axe) ? " and axe.min.js" : ""} in ${vendor}`);

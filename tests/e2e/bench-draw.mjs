// Benchmark (not a test): page load to model-ready, and drawing-change to prediction and
// maps latency, on each backend. Run after `trunk build --release`:
//   (cd tests/e2e && npm install && node bench-draw.mjs)
import { fileURLToPath } from "node:url";
import { LabPage, ZERO, launch, serve } from "./support.mjs";

const dist = fileURLToPath(new URL("../../dist", import.meta.url));
const server = await serve(dist);
const browser = await launch();
for (const backend of ["cpu", "webgpu"]) {
  const lab = new LabPage(await browser.newPage());
  const started = Date.now();
  await lab.open(`${server.url}?backend=${backend}`);
  const ready = Date.now() - started;
  for (let round = 0; round < 3; round++) {
    await lab.clear();
    await lab.stroke(ZERO);
    await lab.settledPrediction();
  }
  const latency = await lab.byTestId("latency").textContent();
  console.log(`${backend}: page load to model-ready ${ready} ms; ${latency}`);
  await lab.page.close();
}
await browser.close();
server.close();

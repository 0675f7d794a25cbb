// Screenshots of every place of the release build, for a person to look at: at 390, 1024, 1440
// and 1920 px, light and dark, on arrival (the example the pad draws by itself, part-way and
// whole, and a first look at Experiments), after a drawing (with the story at each of its
// steps at 1440 px) and while training. Written to tests/e2e/output/shots/.
//   node screenshots.mjs [widths…]
import { mkdir } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { chunk } from "./handwriting-digits.mjs";
import { fileURLToPath } from "node:url";
import { DIST, LabPage, ONE, launch, numberIn, serve, until } from "./support.mjs";

const OUT = fileURLToPath(new URL("output/shots/", import.meta.url));

/** MNIST's first six test digits as a person's set: its two files, gzip-compressed. */
function sixDigits() {
  const digits = chunk("test-002.bin");
  const images = Buffer.alloc(16 + 6 * 784);
  [0x0803, 6, 28, 28].forEach((value, i) => images.writeUInt32BE(value, 4 * i));
  const labels = Buffer.alloc(8 + 6);
  [0x0801, 6].forEach((value, i) => labels.writeUInt32BE(value, 4 * i));
  for (let i = 0; i < 6; i += 1) {
    images.set(digits.image(i), 16 + i * 784);
    labels[8 + i] = digits.labels[i];
  }
  return [
    { name: "images.gz", mimeType: "application/gzip", buffer: gzipSync(images) },
    { name: "labels.gz", mimeType: "application/gzip", buffer: gzipSync(labels) },
  ];
}
const WIDTHS = process.argv.slice(2).map(Number).filter(Boolean);
const PLACES = ["draw", "train", "runs", "experiments", "handwriting"];
const SMALL = "?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32";

await mkdir(OUT, { recursive: true });
const server = await serve(DIST);
const browser = await launch();
try {
  for (const colorScheme of ["light", "dark"]) {
    for (const width of WIDTHS.length ? WIDTHS : [390, 1024, 1440, 1920]) {
      const height = width <= 400 ? 844 : 900;
      const context = await browser.newContext({ colorScheme, viewport: { width, height } });
      const lab = new LabPage(await context.newPage());
      await lab.open(`${server.url}${SMALL}`);
      const shot = async (name, fullPage = false) => lab.page.screenshot({ path: `${OUT}${colorScheme}-${width}-${name}.png`, fullPage });
      // The example the pad draws by itself on arrival, part-way and whole.
      await until(() => lab.byTestId("prediction").textContent(), (t) => t !== "–", { what: "the example's first reading" });
      await shot("arrival-draw");
      await lab.byTestId("story").waitFor({ timeout: 60_000 });
      await lab.page.waitForTimeout(1000);
      await shot("arrival-draw-story", true);
      for (const place of PLACES) {
        await lab.place(place);
        await lab.page.waitForTimeout(400);
        await shot(`fresh-${place}`, true);
      }
      await lab.place("draw");
      await lab.stroke(ONE);
      await lab.settledPrediction();
      await until(() => lab.page.locator(".story-panel").getAttribute("data-ready"), (r) => r === "true", { what: "the story" });
      await shot("drawn-draw");
      await lab.byTestId("story").scrollIntoViewIfNeeded();
      if (width === 1440 || width === 390) {
        for (const step of ["input", "patches", "tokens", "positions", "class-token", "attention", "lens", "head"]) {
          await lab.page.locator(`[role="tab"][data-step="${step}"]`).click();
          await lab.page.waitForTimeout(200);
          await lab.byTestId("story").screenshot({ path: `${OUT}${colorScheme}-${width}-story-${step}.png` });
        }
      }
      await lab.place("experiments");
      await lab.page.waitForTimeout(1500);
      await shot("drawn-experiments", true);
      // A set of six MNIST test digits, one of them deleted (in its place, with Undo), and
      // "Delete all" asking.
      await lab.place("handwriting");
      await lab.byTestId("handwriting-open").setInputFiles(sixDigits());
      await until(() => lab.byTestId("handwriting-count").getAttribute("data-count"), (c) => Number(c) >= 6, { what: "the set" });
      await lab.byTestId("handwriting-digit").nth(1).locator("button.delete").click();
      await lab.byTestId("handwriting-deleted").waitFor();
      await lab.byTestId("handwriting-delete-all").click();
      await lab.page.waitForTimeout(400);
      await shot("digits-handwriting", true);
      await lab.byTestId("handwriting-keep-all").click();
      if (colorScheme === "light") {
        await lab.place("train");
        await lab.byTestId("train-button").click();
        await until(() => numberIn(lab, "training-step"), (s) => s >= 5, { what: "training", timeout: 300_000 });
        await shot("training-train", true);
        await lab.place("runs");
        await lab.page.waitForTimeout(500);
        await shot("training-runs", true);
        await lab.place("train");
        await lab.byTestId("stop-button").click();
      }
      await context.close();
      // A first look at Experiments: its charts on the example, read whole.
      const first = await browser.newContext({ colorScheme, viewport: { width, height } });
      const experiments = new LabPage(await first.newPage());
      await experiments.open(`${server.url}${SMALL}#experiments`);
      await until(() => experiments.byTestId("experiments-need-a-digit").count(), (n) => n === 0, { what: "the example read" });
      await experiments.page.waitForTimeout(1500);
      await experiments.page.screenshot({ path: `${OUT}${colorScheme}-${width}-arrival-experiments.png`, fullPage: true });
      await first.close();
      console.log(`${colorScheme} ${width}: done`);
    }
  }
} finally {
  await browser.close();
  server.close();
}

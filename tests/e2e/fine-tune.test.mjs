// End-to-end: "Learn my handwriting". Twenty digits written unlike MNIST's (MNIST test digits
// slanted hard by the test, then drawn on the pad row by row, the pen thickening them) are
// labelled under the prediction; every second one is held out; the model in use is fine-tuned
// on the rest mixed with MNIST for a fixed number of steps as a run of the training panel; the
// held-out digits are read better after and MNIST's first test digits within one point. Then
// each digit in turn (five folds, and a last run on all twenty): every digit is read better by
// the run that held it out. The runs are in the runs table, the set and the runs survive a
// reload, and the set saves and opens again to the same bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LabPage, servedApp, until } from "./support.mjs";
import { SHEAR, fineTune, handwriting, teachAll } from "./handwriting-digits.mjs";

const app = servedApp();

test("twenty slanted digits drawn and labelled: fine-tuning reads the held-out ones better (a part held out, then each in turn), keeps MNIST within a point, and its runs survive a reload", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await teachAll(lab, handwriting(SHEAR));
  const { seconds, personal, test: mnist } = await fineTune(lab);
  const points = (([right, all]) => (100 * right) / all);
  console.log(`fine-tuning in the page: ${seconds.toFixed(0)} s; held-out ${personal.before[0]}/10 -> ${personal.after[0]}/10; ` +
    `MNIST ${points(mnist.before).toFixed(2)}% -> ${points(mnist.after).toFixed(2)}% on ${mnist.before[1]}`);
  assert.equal(personal.before[1], 10);
  assert.ok(personal.after[0] > personal.before[0], `held out: ${personal.before[0]} -> ${personal.after[0]} of 10`);
  assert.equal(mnist.before[1], 2500);
  assert.ok(Math.abs(points(mnist.after) - points(mnist.before)) <= 1, `MNIST ${points(mnist.before)} -> ${points(mnist.after)}`);
  // The maps before and after, for a held-out digit.
  assert.equal(await lab.byTestId("fine-tune-maps").locator("canvas").count(), 5);
  const maps = await lab.saved("fine-tune-maps-csv");
  const csv = maps.bytes.toString();
  for (const map of ["rollout before (reads ", "rollout after (reads ", "relevance for ", " before", " after"]) assert.ok(csv.includes(map), map);
  const picture = await lab.savedPicture("fine-tune-maps-png");
  assert.ok(picture.png && picture.width > 0, "the maps as one PNG");

  // The run is a run: in the table, named for what it learned from, with its weights.
  await lab.place("runs");
  const row = lab.byTestId("run-row").filter({ hasText: "fine-tuned on 10 of your digits ×20 with 2000 MNIST digits" });
  await until(() => row.count(), (n) => n === 1, { what: "the fine-tuning in the runs table" });
  const run = await row.getAttribute("data-run");

  // Stop waiting: the card lets go, the run goes on in the training panel to its end.
  await lab.place("handwriting");
  await lab.byTestId("fine-tune-scoring").selectOption("folds-5");
  await lab.byTestId("fine-tune-start").click();
  await until(() => lab.byTestId("fine-tune-status").textContent(), (t) => /fine-tuning as run #\d+: step/.test(t), { what: "the first fold training" });
  await lab.byTestId("fine-tune-stop-waiting").click();
  assert.equal(await lab.byTestId("fine-tune").getAttribute("data-stage"), "failed");
  assert.match(await lab.byTestId("fine-tune-status").textContent(), /^Stopped waiting: a run under way goes on in the training panel/);
  // The navigation bar marks Train while a run trains: watched from here, the card in view.
  const training = lab.byTestId("nav-train").locator(".running");
  await until(() => training.count(), (n) => n === 0, { what: "the run let go ending" });
  assert.equal(await lab.byTestId("fine-tune").getAttribute("data-stage"), "failed", "a run let go changes nothing in the card");
  await lab.place("train");
  await until(() => lab.byTestId("run-state").textContent(), (t) => t === "finished", { what: "the run let go finishing in the panel" });

  // Each digit in turn: five runs each hold out a fold, a sixth learns all twenty.
  const folds = await fineTune(lab, { scoring: "folds-5", mix: /^6 runs: 5 that each hold out a fold, .* All 20 scored\.$/ });
  console.log(`five folds and a last run in the page: ${folds.seconds.toFixed(0)} s; all 20 digits ${folds.personal.before[0]}/20 -> ` +
    `${folds.personal.after[0]}/20 out of fold; MNIST ${points(folds.test.before).toFixed(2)}% -> ${points(folds.test.after).toFixed(2)}%`);
  assert.equal(folds.personal.before[1], 20);
  assert.ok(folds.personal.after[0] > folds.personal.before[0], `out of fold: ${folds.personal.before[0]} -> ${folds.personal.after[0]} of 20`);
  assert.ok(Math.abs(points(folds.test.after) - points(folds.test.before)) <= 1, "MNIST within a point");
  assert.match(await lab.byTestId("fine-tune-personal").textContent(), /^your 20 digits, each held out by one of 5 runs/);
  // Drawing with it: the lab now uses its weights. (The comparison is the card's: clicked
  // before the place is left.)
  await lab.byTestId("fine-tune-use").click();
  await until(() => lab.byTestId("model-source").textContent(), (t) => t.includes("fine-tuned run"), { what: "the fine-tuned model in use" });
  await lab.place("runs");
  const kept = lab.byTestId("run-row").filter({ hasText: "fine-tuned on 20 of your digits ×20" });
  await until(() => kept.count(), (n) => n === 1, { what: "the run on every digit in the runs table" });
  assert.equal(await lab.byTestId("run-row").filter({ hasText: "fine-tuned on 16 of your digits ×20" }).count(), 6, "the folds' runs, and the one let go");
  // The training panel says whose plan it ran.
  await lab.place("train");
  assert.match(await lab.byTestId("run-fine-tunes").textContent(), /^Fine-tuning a model on 20 of your digits/);

  await lab.page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 300_000 });
  await lab.place("handwriting");
  await until(() => lab.byTestId("handwriting-count").getAttribute("data-count"), (c) => c === "20", { what: "the set after a reload" });
  await lab.place("runs");
  await until(() => lab.page.locator(`[data-testid="run-row"][data-run="${run}"]`).count(), (n) => n === 1,
    { what: "the run after a reload" });
  await lab.place("handwriting");

  // The set saves as MNIST's files and opens again to the same bytes.
  const images = await lab.saved("handwriting-images");
  const labels = await lab.saved("handwriting-labels");
  await lab.byTestId("handwriting-delete-all").click();
  await lab.byTestId("handwriting-delete-all").click();
  await until(() => lab.byTestId("handwriting-count").getAttribute("data-count"), (c) => c === "0", { what: "an empty set" });
  await lab.byTestId("handwriting-open").setInputFiles([
    { name: "images.gz", mimeType: "application/gzip", buffer: images.bytes },
    { name: "labels.gz", mimeType: "application/gzip", buffer: labels.bytes },
  ]);
  await until(() => lab.byTestId("handwriting-count").getAttribute("data-count"), (c) => c === "20", { what: "the set opened again" });
  assert.ok((await lab.saved("handwriting-images")).bytes.equals(images.bytes), "images, byte for byte");
  assert.ok((await lab.saved("handwriting-labels")).bytes.equals(labels.bytes), "labels, byte for byte");
});

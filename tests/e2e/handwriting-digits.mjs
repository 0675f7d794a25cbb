// A person's handwriting as the end-to-end tests write it, in Chromium (Playwright's LabPage)
// and in Firefox (puppeteer's PageLab): MNIST test digits slanted hard, drawn on the pad stroke
// by stroke, labelled under the prediction, then fine-tuned on ("Learn my handwriting").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { until } from "./support.mjs";

const SIDE = 28;
/** How hard the test slants MNIST's digits: the shipped lab model reads 4 of the 10 held-out
 * ones right (9 of 10 at 0.9: too little left to learn for a test). */
export const SHEAR = 1.4;

// The two pages' ways of clicking and reading an element by its data-testid.
const click = (lab, id) => ("byTestId" in lab ? lab.byTestId(id).click() : lab.click(id));
const text = (lab, id) => ("byTestId" in lab ? lab.byTestId(id).textContent() : lab.text(id));
const evaluate = (lab, fn, arg) => ("byTestId" in lab ? lab.page.evaluate(fn, arg) : lab.evaluate(fn, arg));
const attribute = (lab, id, name) => ("byTestId" in lab ? lab.byTestId(id).getAttribute(name) : lab.attribute(id, name));

/** The digits of one of the project's MNIST chunks (`www/mnist`): raw deflate of a 12-byte
 * header, the labels, then the images. */
export function chunk(name) {
  const raw = inflateRawSync(readFileSync(new URL(`../../www/mnist/${name}`, import.meta.url)));
  assert.equal(raw.subarray(0, 4).toString("latin1"), "VMN1");
  const count = raw.readUInt32LE(4);
  const labels = raw.subarray(12, 12 + count);
  const images = raw.subarray(12 + count);
  return { count, labels, image: (i) => images.subarray(i * SIDE * SIDE, (i + 1) * SIDE * SIDE) };
}

/** `image` slanted: each row moved right by `shear` pixels per row above the middle. */
export function slanted(image, shear) {
  const out = new Uint8Array(SIDE * SIDE);
  for (let y = 0; y < SIDE; y += 1) {
    const shift = Math.round(shear * (SIDE / 2 - y));
    for (let x = 0; x < SIDE; x += 1) {
      const from = x - shift;
      if (from >= 0 && from < SIDE) out[y * SIDE + x] = image[y * SIDE + from];
    }
  }
  return out;
}

/** The strokes that draw `image` on the pad: one along each run of ink in each row. */
export function strokes(image) {
  const lines = [];
  for (let y = 0; y < SIDE; y += 1) {
    let start = -1;
    for (let x = 0; x <= SIDE; x += 1) {
      const ink = x < SIDE && image[y * SIDE + x] > 127;
      if (ink && start < 0) start = x;
      if (!ink && start >= 0) {
        const at = (px) => [(px + 0.5) / SIDE, (y + 0.5) / SIDE];
        lines.push([at(start), at(Math.max(start, x - 1) + 0.01)]);
        start = -1;
      }
    }
  }
  return lines;
}

/** Two digits of each class from the last test chunk (never among the digits scored),
 * slanted: 0, 0, 1, 1, … 9, 9. */
export function handwriting(shear) {
  const digits = chunk("test-003.bin");
  const picked = [];
  for (let label = 0; label < 10; label += 1) {
    let found = 0;
    for (let i = 0; i < digits.count && found < 2; i += 1) {
      if (digits.labels[i] === label) {
        picked.push({ label, image: slanted(digits.image(i), shear) });
        found += 1;
      }
    }
  }
  return picked;
}

/** Deletes the set kept in this browser, if there is one (a browser profile that earlier tests
 * used keeps theirs): once the kept set has been read, "Delete all" is there for a set that is
 * not empty. */
async function emptySet(lab) {
  await lab.place("handwriting");
  const deleteAll = () => evaluate(lab, () => document.querySelector('[data-testid="handwriting-delete-all"]') !== null);
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && !(await deleteAll())) await new Promise((r) => setTimeout(r, 200));
  if (await deleteAll()) {
    await click(lab, "handwriting-delete-all");
    await click(lab, "handwriting-delete-all-confirm");
    await until(() => attribute(lab, "handwriting-count", "data-count"), (c) => c === "0", { what: "an empty set" });
  }
}

/** Draws each digit stroke by stroke and says what it is, in a set emptied first. */
export async function teachAll(lab, digits) {
  await emptySet(lab);
  await lab.place("draw");
  for (const [k, { label, image }] of digits.entries()) {
    await lab.clear();
    await lab.drawLines(strokes(image));
    await lab.settledPrediction();
    await click(lab, `teach-${label}`);
    await until(() => text(lab, "teach-said"), (t) => t.startsWith(`Kept as a ${label}: ${k + 1} in`),
      { what: `digit ${k + 1} kept` });
  }
}

/** Chooses `value` in the select `id`, as a person's choice does (in any of the three labs). */
export async function choose(lab, id, value) {
  await evaluate(lab, ([id, value]) => {
    const select = document.querySelector(`[data-testid="${id}"]`);
    select.value = value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }, [id, value]);
}

/** Fine-tunes on the set, scored as `scoring` (the select's value: "2" holds out every second
 * digit, "folds-5" each digit in turn), with `mnist` MNIST digits a run (the card's own choice
 * when not given), once the card says `mix`; the scores before and after. */
export async function fineTune(lab, { scoring = "2", mnist, mix = / 10 held out to score\.$/, timeout = 1_200_000 } = {}) {
  // The card is in the handwriting place, once the set has a digit.
  await lab.place("handwriting");
  await until(() => evaluate(lab, () => document.querySelector('[data-testid="fine-tune"]') !== null), (shown) => shown,
    { what: "the fine-tuning card" });
  await choose(lab, "fine-tune-scoring", scoring);
  if (mnist !== undefined) await choose(lab, "fine-tune-mnist", String(mnist));
  await until(() => text(lab, "fine-tune-mix"), (t) => mix.test(t), { what: `the mix saying ${mix}` });
  const started = Date.now();
  await click(lab, "fine-tune-start");
  await until(() => attribute(lab, "fine-tune", "data-stage"), (s) => s === "compared" || s === "failed",
    { what: "the fine-tuning compared", timeout });
  const seconds = (Date.now() - started) / 1000;
  assert.equal(await attribute(lab, "fine-tune", "data-stage"), "compared", await text(lab, "fine-tune-status"));
  const read = async (id) => {
    const fraction = async (which) => (await attribute(lab, id, `data-${which}`)).split("/").map(Number);
    return { before: await fraction("before"), after: await fraction("after") };
  };
  return { seconds, personal: await read("fine-tune-personal"), test: await read("fine-tune-test") };
}

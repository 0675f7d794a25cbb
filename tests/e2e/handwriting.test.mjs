// End-to-end: a person's own digits. "It is a …" under the prediction keeps the model's input
// with its label; the card shows the set with what the model reads, relabels and deletes; the
// set survives a reload (IndexedDB), saves as MNIST's two gzip files and opens again to the
// same bytes; hostile files and a hostile database are refused with a message and change
// nothing kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { LOOPS, LabPage, ONE, ZERO, servedApp, until } from "./support.mjs";

const app = servedApp();
const SEVEN = [[0.3, 0.2], [0.7, 0.2], [0.45, 0.85]];

/** Draws `stroke` on a cleared pad and says it is `label`. */
async function teach(lab, stroke, label) {
  await lab.clear();
  await lab.stroke(stroke);
  await lab.settledPrediction();
  await lab.byTestId(`teach-${label}`).click();
}

/** The set's card, in the handwriting place. */
async function gallery(lab) {
  await lab.place("handwriting");
  return lab.byTestId("handwriting-card");
}

async function count(lab, expected) {
  const caption = lab.byTestId("handwriting-count");
  await until(() => caption.getAttribute("data-count"), (c) => c === String(expected), { what: `${expected} digits in the set` });
}

const labels = (lab) => lab.byTestId("handwriting-digit").evaluateAll((items) => items.map((i) => i.dataset.label));

/** MNIST's IDX1 labels file, gzip-compressed, with the header's count `claimed`. */
function labelsFile(labels, claimed = labels.length) {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(0x0801, 0);
  header.writeUInt32BE(claimed, 4);
  return gzipSync(Buffer.concat([header, Buffer.from(labels)]));
}

/**
 * The personal database as a page before digit records left it (version 1: the set as two
 * values, `images` and `labels`), made afresh in `page` (a page of the app's origin that holds
 * no connection to it).
 */
async function oldDatabase(page, { images, labels }) {
  await page.evaluate(({ images, labels }) => new Promise((resolve, reject) => {
    const deleting = indexedDB.deleteDatabase("vitlab-personal");
    deleting.onerror = () => reject(deleting.error);
    deleting.onsuccess = () => {
      const request = indexedDB.open("vitlab-personal", 1);
      request.onupgradeneeded = () => request.result.createObjectStore("set");
      request.onsuccess = () => {
        const tx = request.result.transaction("set", "readwrite");
        const bytes = (value) => (Array.isArray(value) ? new Uint8Array(value) : value);
        tx.objectStore("set").put(bytes(images), "images");
        tx.objectStore("set").put(bytes(labels), "labels");
        tx.oncomplete = () => { request.result.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
      request.onerror = () => reject(request.error);
    };
  }), { images: images instanceof Uint8Array ? [...images] : images, labels: labels instanceof Uint8Array ? [...labels] : labels });
}

/** The digits a tab of `context` finds, opening the lab afresh: their labels, oldest first. */
async function foundByAFreshTab(context) {
  const lab = new LabPage(await context.newPage());
  await lab.open(`${app.server.url}?backend=cpu#handwriting`);
  const caption = lab.byTestId("handwriting-count");
  await until(() => caption.getAttribute("data-loaded"), (l) => l === "true", { what: "the set read" });
  const found = (await labels(lab)).reverse();
  await lab.page.close();
  return found;
}

/** MNIST's IDX3 images file, gzip-compressed: a 28×28 image of one grey level for each of `greys`. */
function imagesFile(greys) {
  const header = Buffer.alloc(16);
  header.writeUInt32BE(0x0803, 0);
  header.writeUInt32BE(greys.length, 4);
  header.writeUInt32BE(28, 8);
  header.writeUInt32BE(28, 12);
  return gzipSync(Buffer.concat([header, ...greys.map((grey) => Buffer.alloc(784, grey))]));
}

/** The middle of the element `locator` finds, on the page. */
async function middle(locator) {
  const box = await locator.boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}

/** Opens `files` as a set; what the card then says, once it says something matching `said`. */
async function open(lab, files, said = /./) {
  await lab.byTestId("handwriting-open").setInputFiles(files.map(([name, buffer]) => ({ name, mimeType: "application/gzip", buffer })));
  return until(() => lab.byTestId("handwriting-said").textContent(), (t) => said.test(t), { what: `the import saying ${said}` });
}

test("digits taught under the prediction join the set, shown with what the model reads; relabel, delete, reload, and save then open gives the same bytes", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await teach(lab, ONE, 1);
  await until(() => lab.byTestId("teach-said").textContent(), (t) => t === "Kept as a 1: 1 in your set.", { what: "the digit kept" });
  await teach(lab, ZERO, 0);
  await teach(lab, SEVEN, 7);
  await gallery(lab);
  await count(lab, 3);
  assert.deepEqual(await labels(lab), ["7", "0", "1"], "newest first");
  const reads = await until(() => lab.byTestId("handwriting-digit").evaluateAll((items) => items.map((i) => i.dataset.read)),
    (r) => r.every((d) => /^\d$/.test(d)), { what: "what the model reads in each" });
  assert.equal(reads[1], "0");
  assert.equal(reads[2], "1");
  assert.match(await lab.byTestId("handwriting-count").textContent(), /^3 digits; the model in use reads \d of them as you labelled them\.$/);

  // The 0 is a 6, the 1 goes.
  await lab.byTestId("handwriting-digit").nth(1).locator("select").selectOption("6");
  await lab.byTestId("handwriting-digit").nth(2).locator("button.delete").click();
  await count(lab, 2);
  assert.deepEqual(await labels(lab), ["7", "6"]);

  await lab.page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 300_000 });
  await gallery(lab);
  await count(lab, 2);
  assert.deepEqual(await labels(lab), ["7", "6"], "the set survives a reload");

  const images = await lab.saved("handwriting-images");
  const labelsSaved = await lab.saved("handwriting-labels");
  assert.equal(images.name, "personal-images-idx3-ubyte.gz");
  assert.equal(labelsSaved.name, "personal-labels-idx1-ubyte.gz");
  await lab.byTestId("handwriting-delete-all").click();
  assert.equal(await lab.byTestId("handwriting-delete-all-confirm").textContent(), "Delete all 2");
  await lab.byTestId("handwriting-delete-all-confirm").click();
  await count(lab, 0);
  // The labels chosen first: the names say which is which.
  assert.equal(await open(lab, [[labelsSaved.name, labelsSaved.bytes], [images.name, images.bytes]], /^Added/),
    `Added 2 digits from ${labelsSaved.name} and ${images.name}.`);
  await count(lab, 2);
  assert.deepEqual(await labels(lab), ["7", "6"]);
  assert.ok((await lab.saved("handwriting-images")).bytes.equals(images.bytes), "the images file again, byte for byte");
  assert.ok((await lab.saved("handwriting-labels")).bytes.equals(labelsSaved.bytes), "the labels file again, byte for byte");
  await lab.page.close();
});

test("hostile set files are refused with a message and nothing kept changes; a hostile database is named and never written over", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await teach(lab, ONE, 1);
  await gallery(lab);
  await count(lab, 1);
  const images = (await lab.saved("handwriting-images")).bytes;
  const refusals = [
    [[["l-labels.gz", labelsFile([11])], ["i-images.gz", images]], /labelled 11, not 0 to 9/],
    [[["a-images.gz", images], ["b-images.gz", images]], /is not MNIST's IDX labels file/],
    [[["l-labels.gz", labelsFile([1], 4_000_000_000)], ["i-images.gz", images]], /holds 4000000000 digits; a personal set holds at most 10000/],
    [[["l-labels.gz", Buffer.from("not gzip at all")], ["i-images.gz", images]], /labels file is not gzip-compressed/],
    [[["l-labels.gz", labelsFile([1, 2])], ["i-images.gz", images]], /1 images but 2 labels/],
    [[["only-images.gz", images]], /Choose both files of a set/],
  ];
  for (const [files, why] of refusals) {
    const said = await open(lab, files, why);
    if (files.length === 2) assert.match(said, /^Nothing was added/);
    await count(lab, 1);
  }

  // A database an older page (version 1, the whole set as two values) left holding what is
  // not a set: named, left as it is, and the page goes on, keeping digits of its own.
  await lab.page.goto(`${app.server.url}favicon.svg`);
  await oldDatabase(lab.page, { images: "hostile", labels: new Uint8Array([1]) });
  await lab.page.goto(`${app.server.url}?backend=cpu`);
  await lab.byTestId("model-ready").waitFor({ timeout: 300_000 });
  await teach(lab, ONE, 1);
  await gallery(lab);
  const alert = lab.byTestId("handwriting-card").locator(".error");
  await until(() => alert.textContent(), (t) => /could not be read \(not bytes\); they are left as they were/.test(t), { what: "the database named" });
  await count(lab, 1);
  const kept = await lab.page.evaluate(() => new Promise((resolve) => {
    const request = indexedDB.open("vitlab-personal");
    request.onsuccess = () => {
      const get = request.result.transaction("set").objectStore("set").get("images");
      get.onsuccess = () => { request.result.close(); resolve(get.result); };
    };
  }));
  assert.equal(kept, "hostile", "what the database held is not written over");
  await lab.page.close();
});

test("two tabs keep, delete all and relabel without losing or bringing back a digit, each showing the other's changes at once; an older page's set moves in once", async () => {
  const context = await app.browser.newContext();
  const [a, b] = [new LabPage(await context.newPage()), new LabPage(await context.newPage())];
  for (const lab of [a, b]) {
    await lab.open(`${app.server.url}?backend=cpu`);
    await lab.stroke(ONE);
    await lab.settledPrediction();
  }
  const keep = async (lab, label, times = 1) => {
    for (let i = 0; i < times; i++) {
      const before = Number(await lab.page.evaluate(() => document.querySelector('[data-testid="teach-said"]')?.textContent.match(/: (\d+) in your set/)?.[1] ?? "-1"));
      await lab.byTestId(`teach-${label}`).click();
      await until(() => lab.byTestId("teach-said").textContent(), (t) => /^Kept/.test(t) && !t.endsWith(`: ${before} in your set.`), { what: "kept" });
    }
  };
  const shown = async (lab) => Number(await lab.page.evaluate(() => document.querySelector('[data-testid="handwriting-count"]')?.dataset.count ?? "-1"));
  for (let loop = 0; loop < LOOPS; loop++) {
    // A keeps 3, B keeps 2, A keeps 1 more: a third tab finds all 6.
    await keep(a, 1, 3);
    await keep(b, 2, 2);
    await keep(a, 3, 1);
    assert.deepEqual(await foundByAFreshTab(context), ["1", "1", "1", "2", "2", "3"], `loop ${loop}: every digit kept`);
    // B, in Handwriting, shows A's digits within a second of A keeping them.
    await b.place("handwriting");
    await until(() => shown(b), (n) => n === 6, { what: `loop ${loop}: B shows all six`, timeout: 1_000 });
    // A relabels its first digit while B shows it; B follows.
    await a.place("handwriting");
    await a.byTestId("handwriting-digit").last().locator("select").selectOption("9");
    await until(() => b.byTestId("handwriting-digit").last().getAttribute("data-label"), (l) => l === "9", { what: `loop ${loop}: B shows the relabelling`, timeout: 1_000 });
    // Delete all in A, then one digit kept in B: a fresh tab finds that one alone.
    await a.byTestId("handwriting-delete-all").click();
    await a.byTestId("handwriting-delete-all-confirm").click();
    await until(() => shown(b), (n) => n === 0, { what: `loop ${loop}: B shows the set emptied`, timeout: 1_000 });
    await b.place("draw");
    await keep(b, 4);
    assert.deepEqual(await foundByAFreshTab(context), ["4"], `loop ${loop}: nothing deleted comes back`);
    // Relabelled in B while A deletes it: whichever lands first, nothing comes back.
    await a.place("handwriting");
    await b.place("handwriting");
    await until(() => shown(a), (n) => n === 1, { what: "A shows B's digit" });
    await Promise.all([
      a.byTestId("handwriting-digit").first().locator("button.delete").click(),
      b.byTestId("handwriting-digit").first().locator("select").selectOption("5"),
    ]);
    assert.deepEqual(await foundByAFreshTab(context), [], `loop ${loop}: the deleted digit stays deleted`);
    await until(() => shown(b), (n) => n === 0, { what: `loop ${loop}: B follows` });
    await a.place("draw");
    await b.place("draw");
  }
  // An older page's set (version 1) moves into digits once, however many tabs open at once.
  const seed = await context.newPage();
  await a.page.goto(`${app.server.url}favicon.svg`);
  await b.page.goto(`${app.server.url}favicon.svg`);
  await seed.goto(`${app.server.url}favicon.svg`);
  const image = (v) => new Array(784).fill(v);
  await oldDatabase(seed, { images: [...image(10), ...image(200)], labels: [3, 8] });
  await Promise.all([a, b].map((lab) => lab.open(`${app.server.url}?backend=cpu#handwriting`)));
  await Promise.all([a, b].map((lab) => until(() => shown(lab), (n) => n === 2, { what: "the old set moved in" })));
  assert.deepEqual(await foundByAFreshTab(context), ["3", "8"], "moved once, in its order");
  await context.close();
});

test("a database an older tab holds is said and waited for; a newer page's upgrade is let through and this tab asks to be reloaded", async () => {
  const context = await app.browser.newContext();
  // An older page's tab: it holds version 1 open and never lets go.
  const older = await context.newPage();
  await older.goto(`${app.server.url}favicon.svg`);
  await older.evaluate(() => new Promise((resolve, reject) => {
    const request = indexedDB.open("vitlab-personal", 1);
    request.onupgradeneeded = () => request.result.createObjectStore("set");
    request.onsuccess = () => { globalThis.held = request.result; resolve(); };
    request.onerror = () => reject(request.error);
  }));
  const lab = new LabPage(await context.newPage());
  await lab.open(`${app.server.url}?backend=cpu#handwriting`);
  const alert = lab.byTestId("handwriting-card").locator(".error");
  await until(() => alert.textContent().catch(() => ""), (t) => /opened before it was updated, holds its database: close that tab, and this one goes on/.test(t), { what: "the blocked upgrade said" });
  // The older tab lets go: the set is read.
  await older.evaluate(() => globalThis.held.close());
  await until(() => lab.byTestId("handwriting-count").getAttribute("data-loaded"), (l) => l === "true", { what: "the set read once let through" });
  // A newer page asks for version 3: this tab lets go at once, and says to reload.
  const newer = await context.newPage();
  await newer.goto(`${app.server.url}favicon.svg`);
  const upgraded = await newer.evaluate(() => new Promise((resolve) => {
    const request = indexedDB.open("vitlab-personal", 3);
    request.onblocked = () => resolve("blocked");
    request.onsuccess = () => { request.result.close(); resolve("opened"); };
    request.onerror = () => resolve(`error: ${request.error}`);
  }));
  assert.equal(upgraded, "opened", "this tab never holds a newer page up");
  await until(() => alert.textContent().catch(() => ""), (t) => /updated in another tab, which needs its database: reload this tab/.test(t), { what: "asked to reload" });
  await context.close();
});

test("a button acts once on the digit it was drawn for: a double-click on a digit's × deletes it alone, Undo brings it back, and a double-click on Delete all deletes nothing", async () => {
  // On 8dd4619 each of these deleted two digits, and the double-click on Delete all every one.
  const context = await app.browser.newContext();
  const lab = new LabPage(await context.newPage());
  await lab.open(`${app.server.url}?backend=cpu#handwriting`);
  await until(() => lab.byTestId("handwriting-count").getAttribute("data-loaded"), (l) => l === "true", { what: "the set read" });
  await open(lab, [["l.gz", labelsFile([1, 2, 3, 4, 5])], ["i.gz", imagesFile([10, 20, 30, 40, 50])]], /^Added/);
  await count(lab, 5);
  assert.deepEqual(await labels(lab), ["5", "4", "3", "2", "1"]);
  const settled = () => new Promise((resolve) => setTimeout(resolve, 600));

  // A double-click (the browser's own: a click, then one counted as its second).
  await lab.page.mouse.dblclick(...(await middle(lab.byTestId("handwriting-digit").first().locator("button.delete"))));
  await settled();
  await count(lab, 4);
  assert.deepEqual(await labels(lab), ["4", "3", "2", "1"]);
  // Two clicks 150 ms apart on one place: the deleted digit keeps its place, with an Undo
  // below where its × was, so nothing slides under the pointer.
  const place = await middle(lab.byTestId("handwriting-digit").first().locator("button.delete"));
  await lab.page.mouse.click(...place);
  await new Promise((resolve) => setTimeout(resolve, 150));
  await lab.page.mouse.click(...place);
  await settled();
  await count(lab, 3);
  assert.deepEqual(await labels(lab), ["3", "2", "1"]);
  assert.equal(await lab.byTestId("handwriting-deleted").count(), 2, "each deleted digit in its place");

  // Undo: the 5 again, in its place, kept (a fresh tab finds it).
  await lab.byTestId("handwriting-undo").first().click();
  await count(lab, 4);
  assert.deepEqual(await labels(lab), ["5", "3", "2", "1"]);
  assert.deepEqual(await foundByAFreshTab(context), ["1", "2", "3", "5"]);

  // Delete all asks first; a double-click's second click lands on "Keep them".
  await lab.page.mouse.dblclick(...(await middle(lab.byTestId("handwriting-delete-all"))));
  await settled();
  await count(lab, 4);
  assert.equal(await lab.byTestId("handwriting-delete-all").count(), 1, "the question withdrawn");
  // Asked, it is a click of its own that deletes them.
  await lab.byTestId("handwriting-delete-all").click();
  assert.equal(await lab.byTestId("handwriting-delete-all-confirm").textContent(), "Delete all 4");
  await lab.byTestId("handwriting-delete-all-confirm").click();
  await count(lab, 0);
  await until(() => lab.byTestId("handwriting-said").textContent(), (t) => t === "Every digit deleted.", { what: "the deletion said" });
  assert.equal(await lab.byTestId("handwriting-deleted").count(), 0, "no Undo for digits deleted one by one before");
  assert.deepEqual(await foundByAFreshTab(context), []);
  await context.close();
});

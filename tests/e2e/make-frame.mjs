// Writes index.html's static first screen below its header (`<div id="frame">`) from the
// app's own: the built page is opened with its drawing worker held back, so the app shows its
// first screen as it is before the model arrives, and that markup (test hooks and Leptos'
// markers dropped) goes between index.html's frame markers. Run it after a change to the first screen, then rebuild:
//   trunk build && (cd tests/e2e && node make-frame.mjs) && trunk build
// layout.test.mjs fails when the committed frame no longer lays out as the app does.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { DIST, launch, serve } from "./support.mjs";

const INDEX = fileURLToPath(new URL("../../index.html", import.meta.url));
const START = "<!-- frame: written by tests/e2e/make-frame.mjs -->";
const END = "<!-- /frame -->";

/** The app's first screen, as markup, with the drawing worker held back. */
export async function appFirstScreen(page, url) {
  await page.route(/drawer\.js/, (route) => route.abort());
  await page.goto(url);
  await page.locator(".lab .heatmaps .multiples").waitFor();
  // Every layer's row of maps is built (one a task).
  await page.waitForFunction(() => {
    const cells = document.querySelectorAll(".multiples td");
    return cells.length > 0 && document.querySelectorAll(".multiples td canvas").length === cells.length;
  });
  return page.evaluate(() => {
    // The navigation bar and the draw place's first screen.
    const copy = document.createElement("div");
    copy.append(document.querySelector("nav.places").cloneNode(true), document.querySelector("main").cloneNode(true));
    // The story comes after the first screen.
    copy.querySelectorAll(".story").forEach((node) => node.remove());
    // The maps of every layer come a task after the app's first screen: the frame keeps their
    // table, which gives the room its width and height, and leaves out the maps themselves.
    copy.querySelectorAll(".map-multiples canvas").forEach((node) => node.remove());
    const walker = document.createTreeWalker(copy, NodeFilter.SHOW_COMMENT);
    const comments = [];
    while (walker.nextNode()) comments.push(walker.currentNode);
    comments.forEach((node) => node.remove());
    copy.querySelectorAll("*").forEach((node) => {
      for (const name of node.getAttributeNames()) if (name.startsWith("data-")) node.removeAttribute(name);
    });
    return copy.innerHTML;
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await serve(DIST);
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const markup = await appFirstScreen(page, server.url);
    const index = await readFile(INDEX, "utf8");
    const [before, rest] = index.split(START);
    if (rest === undefined || !rest.includes(END)) throw new Error(`index.html has no ${START} … ${END}`);
    const after = rest.slice(rest.indexOf(END));
    const frame = `${START}\n    <div id="frame">${markup}</div>\n    `;
    await writeFile(INDEX, `${before}${frame}${after}`);
    console.log(`index.html: frame of ${markup.length} characters written; rebuild with trunk build`);
  } finally {
    await browser.close();
    server.close();
  }
}

// The Firefox side of the e2e tests: Debian's Firefox ESR driven by puppeteer-core over
// WebDriver BiDi (playwright-core drives only its own patched Firefox), and engine-lab.mjs's
// page object on puppeteer.
import puppeteer from "puppeteer-core";
import { servedApp } from "./support.mjs";
import { PageLab } from "./engine-lab.mjs";

/** Headless Firefox: `FIREFOX`, or Debian's firefox-esr. */
export async function launchFirefox() {
  return puppeteer.launch({
    browser: "firefox",
    protocol: "webDriverBiDi",
    executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
    headless: true,
  });
}

/** As support.mjs's `servedApp`, with Firefox: read `server` and `browser` inside the tests. */
export function servedAppInFirefox() {
  return servedApp(launchFirefox);
}

/**
 * The lab in puppeteer ([`PageLab`]). It records the page's uncaught errors (`pageerror`, the
 * page's and its workers') and console errors from the moment it is made, and the workers
 * started, page's and workers' alike. Its places and head switches open as [`EngineLab`]'s
 * `place` and `openHeadSwitches` open them, through puppeteer's clicks.
 */
export class FirefoxLab extends PageLab {
  constructor(page) {
    super(page);
    this.errors = [];
    this.warnings = [];
    this.workers = [];
    page.on("pageerror", (error) => this.errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") this.errors.push(`console.error: ${message.text()}`);
      if (message.type() === "warn") this.warnings.push(message.text());
    });
    page.on("workercreated", (worker) => this.workers.push(worker.url()));
  }
  static async open(browser, url, { timeout = 300_000, viewport = null } = {}) {
    const page = await browser.newPage();
    if (viewport) await page.setViewport(viewport);
    const lab = new FirefoxLab(page);
    await lab.goto(url);
    await lab.waitFor("model-ready", timeout);
    return lab;
  }
}

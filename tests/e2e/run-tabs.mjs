// Tabs of the lab in the training place, for the tests of how runs are kept and end
// (runs.test.mjs, run-ends.test.mjs).
import { LabPage, numberIn, until } from "./support.mjs";

/** A one-block model in one CPU worker: steps in tens of milliseconds. */
export const LINK = "?backend=cpu&cpu-workers=1&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=1";

/** A tab of `context` on `app`'s lab at `query`, in the training place, each checkpoint held
 * back `delay` ms (a global only a test sets). */
export async function openRunTab(app, context, { delay = 0, query = LINK, prepare = async () => {} } = {}) {
  const page = await context.newPage();
  await page.addInitScript((ms) => { globalThis.vitlabTestSaveDelayMs = ms; }, delay);
  await prepare(page);
  const lab = new LabPage(page);
  await lab.open(`${app.server.url}${query}#train`);
  return {
    page,
    lab,
    step: () => numberIn(lab, "training-step"),
    state: () => lab.byTestId("run-state").textContent(),
    run: () => page.evaluate(() => sessionStorage.getItem("vitlab-run")),
    row: (id) => page.locator(`[data-testid="run-row"][data-run="${id}"]`),
  };
}

export async function reload(tab) {
  await tab.page.reload();
  await tab.lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
}

export async function trainTo(tab, steps) {
  await until(tab.state, (s) => s === "training", { what: "training" });
  return until(tab.step, (s) => s >= steps, { what: `step ${steps}` });
}

import { serve, launch, LabPage, ONE, DIST, until } from "./support.mjs";
const server = await serve(DIST);
const browser = await launch();
for (const scheme of ["light", "dark"]) {
  const page = await browser.newPage({ colorScheme: scheme, viewport: { width: 1440, height: 900 } });
  const lab = new LabPage(page);
  await lab.open(`${server.url}?backend=cpu`);
  for (const width of [390, 1024, 1440, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: `/tmp/shots/${scheme}-before-${width}.png` });
  }
  await lab.stroke(ONE);
  await lab.settledPrediction();
  await lab.byTestId("switch-heads").click();
  for (const h of ["3.8", "5.7", "2.2"]) await page.locator(`[data-head="${h}"]`).click();
  await until(() => lab.byTestId("prediction-card").getAttribute("data-heads-off"), (o) => o === "2.2,3.8,5.7");
  await lab.settledPrediction();
  for (const width of [390, 1024, 1440, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(300);
    await page.locator(".lab").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: `/tmp/shots/${scheme}-off-${width}.png` });
    await page.locator('[data-testid="head-switches"]').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `/tmp/shots/${scheme}-switches-${width}.png` });
  }
  await page.setViewportSize({ width: 1440, height: 900 });
  const card = lab.byTestId("heads-matter-card");
  await card.scrollIntoViewIfNeeded();
  await lab.byTestId("heads-matter-images").selectOption("100");
  await lab.byTestId("heads-matter-measure").click();
  await until(() => lab.byTestId("heads-matter").getAttribute("data-state"), (s) => s === "ready", { timeout: 300000 });
  for (const width of [390, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(300);
    await card.screenshot({ path: `/tmp/shots/${scheme}-matter-${width}.png` });
  }
  await page.close();
}
await browser.close();
server.close();

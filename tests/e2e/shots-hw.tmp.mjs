import { serve, launch, LabPage, ONE, ZERO, DIST, until } from "./support.mjs";
const server = await serve(DIST);
const browser = await launch();
const SEVEN = [[0.3, 0.2], [0.7, 0.2], [0.45, 0.85]];
for (const scheme of ["light", "dark"]) {
  const page = await browser.newPage({ colorScheme: scheme, viewport: { width: 1440, height: 900 } });
  const lab = new LabPage(page);
  await lab.open(`${server.url}?backend=cpu`);
  for (const [stroke, label] of [[ONE, 1], [ZERO, 0], [SEVEN, 7], [SEVEN, 1], [ZERO, 6]]) {
    await lab.clear(); await lab.stroke(stroke); await lab.settledPrediction();
    await lab.byTestId(`teach-${label}`).click();
  }
  for (const width of [390, 1024, 1440, 1920]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    await page.screenshot({ path: `/tmp/shots/${scheme}-teach-${width}.png` });
    const card = lab.byTestId("handwriting-card");
    await card.scrollIntoViewIfNeeded();
    await until(() => lab.byTestId("handwriting-count").getAttribute("data-count"), (c) => c === "5");
    await page.waitForTimeout(500);
    await card.screenshot({ path: `/tmp/shots/${scheme}-gallery-${width}.png` });
  }
  await page.close();
}
await browser.close();
server.close();

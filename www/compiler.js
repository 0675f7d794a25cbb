// The page's wasm, fetched and compiled on a thread of its own: index.html starts this worker
// as its first script and hands the compiled module to the page's loader (scripts/stamp.sh),
// so the page's thread neither decodes nor validates 4.7 MB (on a phone's CPU that was the
// first load's second-longest task). The page then gives the same module to its drawing
// worker (src/web/link.rs), which compiles nothing. Whatever goes wrong, the page is told the
// address instead and loads the wasm itself, as it would without this worker.
self.onmessage = async ({ data: url }) => {
  try {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    // compileStreaming needs the wasm type, which not every static host sends.
    const module = (response.headers.get("content-type") ?? "").startsWith("application/wasm")
      ? await WebAssembly.compileStreaming(response)
      : await WebAssembly.compile(await response.arrayBuffer());
    self.postMessage(module);
  } catch (error) {
    self.postMessage(String(error));
  }
};

// vitlab's service worker: the page, its workers, the shipped default weights and the data's
// manifest keep working with the network gone, after one visit.
//
// Online it is as if there were none: files named by their content (Trunk's hashed page, script
// and style) come from the cache, as they cannot change; every other file comes from the
// network, and a copy of each answer is kept for when the network is gone. Offline the kept
// copies answer. MNIST's chunks pass through: the training worker keeps its own verified
// copies in Cache Storage (`vitlab-mnist-v1`).
//
// An update is a new VERSION (the build stamps it, with SHELL, from the hashes of the files
// it made: scripts/stamp.sh): the new worker fetches the new build's files into a cache of
// its own, takes over at once and deletes the old version's cache.

const VERSION = "unstamped";
const SHELL = [];

const PREFIX = "vitlab-app-";
const CACHE = PREFIX + VERSION;
/// Files whose name carries a hash of their content (Trunk's `name-<16 hex>.ext`).
const CONTENT_NAMED = /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/;
/// The smallest module with a relaxed SIMD instruction (src/web/link.rs holds the same bytes):
/// where it validates the page starts `worker_fma`, elsewhere `worker`, and only that one is
/// kept at install.
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x01, 0x20, 0x02, 0xfd, 0x85, 0x02,
  0x0b,
]);
/// The heavy worker this browser never starts (its script, loader and wasm).
const UNUSED_WORKER = WebAssembly.validate(RELAXED_SIMD_PROBE)
  ? /^worker(_loader)?\.js$|^worker_bg\.wasm$/
  : /^worker_fma(_loader)?\.js$|^worker_fma_bg\.wasm$/;
/// The training worker keeps these itself, verified against the manifest.
const KEPT_BY_THE_PAGE = /\/mnist\/[^/]+\.bin$/;

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // `reload`: this build's files from the server, never an older copy from the HTTP cache.
      const used = SHELL.filter((path) => !UNUSED_WORKER.test(path));
      await cache.addAll(used.map((path) => new Request(path, { cache: "reload" })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      }
      // The page that registered this worker, and its workers started from now on, use it
      // without a reload.
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (!url.pathname.startsWith(new URL("./", self.location).pathname)) return;
  if (KEPT_BY_THE_PAGE.test(url.pathname)) return;
  const answer = CONTENT_NAMED.test(url.pathname) ? cacheFirst(event) : networkFirst(event);
  event.respondWith(answer);
});

async function cacheFirst(event) {
  const cache = await caches.open(CACHE);
  return (await cache.match(event.request)) ?? keep(event, cache, await fetch(event.request));
}

async function networkFirst(event) {
  const { request } = event;
  const cache = await caches.open(CACHE);
  try {
    return keep(event, cache, await fetch(request));
  } catch (offline) {
    // A page opened as `./?plan=…` or a worker as `worker_loader.js?role=…` is the same file.
    const kept = await cache.match(request, { ignoreSearch: true });
    if (kept) return kept;
    if (request.mode === "navigate") {
      const page = await cache.match(new URL("./index.html", self.location).href);
      if (page) return page;
    }
    throw offline;
  }
}

/// Keeps a copy of a whole, plain answer; hands the answer on either way.
function keep(event, cache, response) {
  if (response.status === 200 && response.type === "basic") {
    // A full disk costs only the offline copy.
    event.waitUntil(cache.put(event.request, response.clone()).catch(() => {}));
  }
  return response;
}

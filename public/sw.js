// The console's service worker: keeps the console's own files (HTML, scripts, styles, icons) so a
// reload works without the network; the outbox (IndexedDB) then still holds the captures and sends
// them when the server answers again. Network first: online, every file comes fresh from the
// server (a deploy shows at once) and refreshes the copy; only when the server cannot be reached
// (or takes longer than FALLBACK_AFTER_MS while a copy exists) is the copy used. The API (/v1/)
// and everything not of this origin are never touched: no key, no proof, no answer is cached here.

const CACHE = 'countersign-console-files';
const FALLBACK_AFTER_MS = 4000;
/** After a failed or late fetch, the next files come from the copies at once for this long. */
const OFFLINE_FOR_MS = 15000;
let offlineUntil = 0;
const FILE_DESTINATIONS = new Set(['document', 'script', 'style', 'image', 'manifest']);

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

function isConsoleFile(url) {
  return url.origin === self.location.origin && !url.pathname.startsWith('/v1/') && url.pathname !== '/sw.js';
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || !isConsoleFile(url) || !FILE_DESTINATIONS.has(request.destination)) return;
  event.respondWith(networkFirst(request));
});

/** The page lists the files it loaded before this worker controlled it (the first visit). */
self.addEventListener('message', (event) => {
  const urls = Array.isArray(event.data?.keep) ? event.data.keep : [];
  const files = urls.map((text) => new URL(text, self.location.origin)).filter(isConsoleFile).map((url) => url.pathname);
  event.waitUntil(caches.open(CACHE).then((cache) => Promise.all(files.map((path) =>
    fetch(path, { cache: 'no-store' }).then((response) => (response.ok ? cache.put(path, response) : undefined), () => undefined)))));
});

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  // receipt.html?reference=… is one file; the query only tells the page what to load.
  const key = new URL(request.url).pathname;
  const copy = await cache.match(key);
  const network = fetch(request).then((response) => {
    if (response.ok) cache.put(key, response.clone());
    return response;
  });
  if (!copy) return network;
  // One page load asks for a dozen files: once one had to fall back, the rest do not wait again.
  const fallBack = () => {
    offlineUntil = Date.now() + OFFLINE_FOR_MS;
    return copy;
  };
  if (Date.now() < offlineUntil) {
    network.catch(() => undefined);
    return copy;
  }
  const late = new Promise((resolve) => setTimeout(resolve, FALLBACK_AFTER_MS)).then(fallBack);
  return Promise.race([network.catch(fallBack), late]);
}

// Quad's service worker: keeps the shell's assets and the last copy of each page, so a visited page
// opens offline. Features add their data and images to what is cached.
"use strict";
const VERSION = "{{version}}";
const SHELL = "quad-shell-" + VERSION;
const PAGES = "quad-pages-v1";
const SHELL_URLS = {{shellURLs}};

self.addEventListener("install", (event) => {
  // Without cookies: a pre-cached page must not hand the browser a second CSRF cookie that would
  // replace the one in the page being read.
  const requests = SHELL_URLS.map((url) => new Request(url, { credentials: "omit" }));
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(requests)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("quad-shell-") && k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim())
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== location.origin || url.pathname.startsWith("/api/events")) return;
  if (url.pathname.startsWith("/assets/") || url.pathname.startsWith("/images/")) {
    // Content-addressed: the cached copy is always right.
    event.respondWith(caches.match(request).then((hit) => hit || fetch(request).then((response) => {
      if (response.ok) { const copy = response.clone(); caches.open(SHELL).then((c) => c.put(request, copy)); }
      return response;
    })));
    return;
  }
  if (url.searchParams.has("fragment")) {
    // A page's live part (live.js): the network first (it changes all the time), the last copy when offline
    // so the page can still show it. That copy says so in a header: the page shows it but never calls it fresh.
    event.respondWith(fetch(request).then((response) => {
      if (response.status === 200) { const copy = response.clone(); caches.open(PAGES).then((c) => c.put(url.href, copy)); }
      return response;
    }).catch(() => caches.match(url.href).then((hit) => {
      if (!hit) return Response.error();
      const headers = new Headers(hit.headers);
      headers.set("X-Quad-Offline-Copy", "1");
      return new Response(hit.body, { status: hit.status, statusText: hit.statusText, headers });
    })));
    return;
  }
  if (request.mode === "navigate") {
    // Pages: the network first, the last copy when offline, and for a page never opened here a page that says so.
    event.respondWith(fetch(request).then((response) => {
      if (response.ok) { const copy = response.clone(); caches.open(PAGES).then((c) => c.put(request, copy)); }
      return response;
    }).catch(() => caches.match(request).then((hit) => hit || caches.match("/offline"))));
  }
});

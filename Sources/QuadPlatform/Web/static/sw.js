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

// A page that depends on who asks (`Cache-Control: private`) is shown offline only while the server confirmed
// the session lately: a session the server ended (a password reset, a removal) must not go on showing what was
// that person's. Any sign that it ended (a 401, the sign-in page, where a page for people signed in sends whoever
// the server no longer knows) drops every kept page.
const CONFIRMED = "/__quad/session-confirmed";
const TRUST_MS = 8 * 60 * 60 * 1000;

const personal = (response) => (response.headers.get("Cache-Control") || "").includes("private");

const keep = async (key, response) => {
  if (response.status === 401 || new URL(response.url || location.href).pathname === "/signin") {
    await caches.delete(PAGES);
    return;
  }
  if (response.status !== 200) return;
  const cache = await caches.open(PAGES);
  await cache.put(key, response);
  if (personal(response)) await cache.put(CONFIRMED, new Response(String(Date.now())));
};

const kept = async (key) => {
  const cache = await caches.open(PAGES);
  // The shell's pages were fetched without cookies when the worker installed: nobody's.
  const hit = (await cache.match(key)) || (await caches.match(key));
  if (!hit || !personal(hit)) return hit;
  const confirmed = await cache.match(CONFIRMED);
  const at = confirmed ? Number(await confirmed.text()) : 0;
  return Date.now() - at <= TRUST_MS ? hit : undefined;
};

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
      event.waitUntil(keep(url.href, response.clone()));
      return response;
    }).catch(() => kept(url.href).then((hit) => {
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
      event.waitUntil(keep(request, response.clone()));
      return response;
    }).catch(() => kept(request).then((hit) => hit || caches.match("/offline"))));
  }
});

// QuadKit: the native-app core over Quad's API.
//
// - `QuadClient`: the generated client over URLSession with the kit's middleware (auth, Idempotency-Key,
//   retries with backoff and jitter honouring Retry-After, ETag revalidation with its own cache), plus raw
//   routes (`GET /api/rooms`, images) through the same middleware.
// - `Refresher`, `EventStreamClient` (SSE with Last-Event-ID resume), `OfflineStore`, `ImageCache`.
// - Feature stores built on a `KitSession`: `RoomsStore` (Specials, Library and Timetable slot in alike).
// - `KitClock`: injected time (`SystemClock`, `ManualClock` for tests).

-- Benchmarks/pgbench/booking.sql: the limit for the booking storm on PostgreSQL (booking-pgbench in
-- Benchmarks/run). One pgbench transaction is one booking, made with the statements Quad's
-- RoomStore.bookAlone / takeInOneStatement send for `POST /api/rooms/{id}/bookings` on PostgreSQL
-- (seen with log_statement = all), each its own round trip:
--   WITH taken AS (UPDATE rooms ... AND spots > 0 AND NOT EXISTS (the person's booking there)
--                  RETURNING spots),
--        stored AS (INSERT INTO room_bookings (...) SELECT ... FROM taken)
--   SELECT spots, pg_notify(channel, nextval('quad_event_ids') || ' ' || 'room {...spots...}')
--   FROM taken
-- one statement, its own transaction, with the booking's event (EventHub.publication: sent when
-- the booking commits); and, when it took nothing, the SELECT Quad runs to tell "full" from
-- "already booked". Run it with `pgbench -M extended`: Quad (PostgresNIO) sends every
-- statement as an unnamed statement with bound parameters (Parse/Bind/Execute), never prepared
-- once and reused.
--
-- Differences, all negligible next to a round trip: pgbench has no string variables, so the ids
-- are built in SQL (`:prefix || '-' || :room` where Quad binds "storm-7"); a booking id is a random
-- 63-bit number (Quad: 128 random bits, base64url), random like Quad's so the primary key index
-- takes inserts all over as it does under Quad; created_at is one fixed string for the run.
--
-- Which pair: the k-th booking overall books room k mod ROOMS for person k div ROOMS, as the
-- storm's wrk threads do (one person sweeps every room, then the next), so no (person, room) pair
-- repeats and rooms fill evenly. Client c's n-th transaction (n counts from 0 in :n, which
-- persists between a client's transactions) is k = c + CLIENTS * n.
--
-- Variables (pgbench -D): n=0, clients, rooms, prefix (rooms PREFIX-k, people PREFIX-pN), title
-- (display names "TITLE person N"), created_at, channel (the events' channel, as Quad's).
\set k :client_id + :clients * :n
\set n :n + 1
\set room 1 + :k % :rooms
\set person 1 + :k / :rooms
\set id random(1000000000000000000, 9223372036854775806)
-- \aset leaves spots alone when the statement returns no row (no spot taken).
\set spots -1
WITH taken AS (
    UPDATE rooms SET spots = spots - 1 WHERE id = :prefix || '-' || :room AND spots > 0
    AND NOT EXISTS (SELECT 1 FROM room_bookings
                    WHERE room_id = :prefix || '-' || :room AND person_key = :prefix || '-p' || :person)
    RETURNING spots),
stored AS (
    INSERT INTO room_bookings (id, room_id, person, person_key, owner, created_at)
    SELECT :id, :prefix || '-' || :room, :title || ' person ' || :person, :prefix || '-p' || :person,
           :prefix || '-p' || :person, :created_at FROM taken)
SELECT spots, pg_notify(:channel, nextval('quad_event_ids')::text || ' ' || 'room {"id":"' || :prefix || '-' || :room
                        || '","spots":' || spots::text || ',"change":"spots"}') FROM taken \aset
\if :spots < 0
SELECT spots, (SELECT COUNT(*) FROM room_bookings
               WHERE room_id = :prefix || '-' || :room AND person_key = :prefix || '-p' || :person) AS mine
FROM rooms WHERE id = :prefix || '-' || :room;
\endif

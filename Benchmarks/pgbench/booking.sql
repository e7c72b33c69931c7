-- Benchmarks/pgbench/booking.sql: the limit for the booking storm on PostgreSQL (booking-pgbench in
-- Benchmarks/run). One pgbench transaction is one booking in time, made with the statements Quad's
-- ReservationStore.reserveAll sends for a batch of one booking (`POST /api/rooms/{id}/bookings`; Quad writes
-- the bookings made at the same time as one batch, in these statements however many they are), each its own
-- round trip: BEGIN; the room's row locked, with its free seats now and whether anyone waits in its lines
-- (nobody, in the storm); the bookings overlapping the range; the person's untimed booking there; the insert
-- (when a seat is free in every quarter hour, which Quad decides in Swift and this script in SQL, its one extra
-- statement);
-- COMMIT; then the booking's event (EventHub.publish: pg_notify). Run it with `pgbench -M
-- extended`: Quad (PostgresNIO) sends every statement as an unnamed statement with bound
-- parameters (Parse/Bind/Execute), never prepared once and reused.
--
-- Not included, as for the SQLite bare loop: the session lookup, the building's rules and the
-- campus's time zone (a SELECT each, before the transaction).
--
-- Differences, all negligible next to a round trip: pgbench has no string variables, so the ids
-- are built in SQL (`:prefix || '-' || :room` where Quad binds "storm-7"); a booking id is a random
-- 63-bit number (Quad: 128 random bits, base64url); created_at is one fixed string for the run.
--
-- Which pair and when: the k-th booking overall books room k mod ROOMS for person k div ROOMS, as
-- the storm's wrk threads do, for an hour from quarter hour BASE + (person's pass mod 4), as the
-- storm does (the four ranges overlap in one quarter hour, so a room takes exactly its seats).
-- Client c's n-th transaction (n counts from 0 in :n, which persists between a client's
-- transactions) is k = c + CLIENTS * n.
--
-- Variables (pgbench -D): n=0, clients, rooms, prefix (rooms PREFIX-k, people PREFIX-pN), title
-- (display names "TITLE person N"), created_at, channel (the events' channel, as Quad's), base
-- (the first quarter hour, counted since 1970), now (the quarter hour now).
\set k :client_id + :clients * :n
\set n :n + 1
\set room 1 + :k % :rooms
\set person 1 + :k / :rooms
\set first :base + (:person - 1) % 4
\set id random(1000000000000000000, 9223372036854775806)
BEGIN;
SELECT r.id, r.name, r.building, r.capacity, r.spots, r.photo, r.hours AS room_hours,
       b.hours AS building_hours,
       (SELECT COUNT(*) FROM room_bookings k WHERE k.room_id = r.id) AS standing,
       (SELECT COALESCE(SUM(v.seats), 0) FROM room_reservations v WHERE v.room_id = r.id AND v.hold = 'seat'
        AND v.first_slot <= :now AND v.end_slot > :now) AS seats_held,
       (SELECT COALESCE(SUM(v.seats), 0) FROM room_reservations v WHERE v.room_id = r.id AND v.hold = 'room'
        AND v.first_slot <= :now AND v.end_slot > :now) AS whole,
       CASE WHEN EXISTS (SELECT 1 FROM waiting_places WHERE kind = 'room' AND thing = "r"."id") THEN 1 ELSE 0 END
       AS lines
FROM rooms r LEFT JOIN room_buildings b ON b.name_key = LOWER(r.building) WHERE r.id IN (:prefix || '-' || :room)
ORDER BY r.id FOR UPDATE OF r \gset room_
SELECT id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by,
       checked_in_at
FROM room_reservations
WHERE (room_id = :prefix || '-' || :room AND end_slot > :first AND first_slot < :first + 4)
ORDER BY first_slot, id;
SELECT room_id, owner FROM room_bookings
WHERE room_id IN (:prefix || '-' || :room) AND owner IN (:prefix || '-p' || :person);
SELECT COALESCE(MAX(held), 0) AS peak FROM (
    SELECT slot, SUM(v.seats) AS held FROM generate_series(:first, :first + 3) AS slot
    JOIN room_reservations v ON v.room_id = :prefix || '-' || :room AND v.first_slot <= slot AND v.end_slot > slot
    GROUP BY slot) AS busiest \gset
\if :peak < :room_spots - :room_standing
INSERT INTO room_reservations
    (id, room_id, owner, person, hold, seats, first_slot, end_slot, series_id, created_at, check_in_by)
VALUES (:id, :prefix || '-' || :room, :prefix || '-p' || :person, :title || ' person ' || :person, 'seat', 1,
        :first, :first + 4, NULL, :created_at, NULL);
\endif
COMMIT;
\if :peak < :room_spots - :room_standing
SELECT pg_notify(:channel, nextval('quad_event_ids')::text || ' ' || 'room {"change":"spots","id":"' || :prefix
                 || '-' || :room || '","spots":' || :room_spots || '}');
\endif

"""A small GTFS static feed the tests make (https://gtfs.org/documentation/schedule/reference/), as a campus shuttle
operator would publish it: a handful of stops, two routes, a weekday calendar with a date removed, a daily calendar,
and a trip past midnight. Written with the standard library's csv and zipfile, read by Quad itself.

Checked once by hand with gtfs-kit 13.0.1 (too heavy for CI; its 13.x has no `validate`), in e2e/:

    python3 -c "import gtfs_feed as g, pathlib as p, datetime as d
    g.write_feed(p.Path('/tmp/feed.zip'), d.date(2026, 10, 3))"
    python3 -c "import gtfs_kit as gk; f = gk.read_feed('/tmp/feed.zip', dist_units='km'); print(f.describe());
    print(f.compute_trip_activity(['20261002', '20261005'])); print(f.get_stop_times('20261003'))"

It read the feed whole (Campus Shuttle, Australia/Melbourne, 2 routes, 5 trips, 5 stops, 20260903 to 20261202), found
the morning trip active on Friday 2 October and not on Monday 5 October (the date removed), and listed Saturday's
calls with the night trip at 25:10:00.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from pathlib import Path

STOPS = [
    ("CL", "Clayton campus"),
    ("CA", "Caulfield campus"),
    ("PE", "Peninsula campus"),
    ("HS", "Huntingdale station"),
    ("CBD", "City"),
]
# (route_id, short name, long name)
ROUTES = [("601", "601", "Clayton – Caulfield"), ("NIGHT", "N1", "Night shuttle")]


def yyyymmdd(date: dt.date) -> str:
    return date.strftime("%Y%m%d")


def tables(around: dt.date) -> dict[str, list[dict[str, str]]]:
    """The feed's files, its services running from 30 days before `around` to 60 after. The weekday service does not
    run on `removed_on(around)` (the next weekday after `around`, a holiday); the daily one runs every day.

    Trips:
      morning  601 weekdays  Clayton campus 08:00 → Huntingdale station 08:10 → Caulfield campus 08:25
      back     601 daily     Caulfield campus 08:00 → Clayton campus 08:25 (the headsign left out: the last stop's name)
      evening  601 daily     Clayton campus 17:30 → Caulfield campus 17:55
      late     N1  daily     Clayton campus 25:10 → City 25:50 (01:10 the next morning)
      early    N1  daily     Peninsula campus 03:30 → City 04:30
    """
    first, last = around - dt.timedelta(days=30), around + dt.timedelta(days=60)
    weekdays = {day: "1" for day in ("monday", "tuesday", "wednesday", "thursday", "friday")}
    weekend = {"saturday": "0", "sunday": "0"}
    every_day = {day: "1" for day in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")}
    span = {"start_date": yyyymmdd(first), "end_date": yyyymmdd(last)}
    calls = {
        "morning": [("CL", "08:00:00"), ("HS", "08:10:00"), ("CA", "08:25:00")],
        "back": [("CA", "08:00:00"), ("CL", "08:25:00")],
        "evening": [("CL", "17:30:00"), ("CA", "17:55:00")],
        "late": [("CL", "25:10:00"), ("CBD", "25:50:00")],
        "early": [("PE", "03:30:00"), ("CBD", "04:30:00")],
    }
    return {
        "agency.txt": [
            {
                "agency_id": "CS",
                "agency_name": "Campus Shuttle",
                "agency_url": "https://shuttle.example.edu",
                "agency_timezone": "Australia/Melbourne",
            }
        ],
        "stops.txt": [
            {"stop_id": stop_id, "stop_name": name, "stop_lat": f"{-37.9 - i / 100:.4f}", "stop_lon": "145.1"}
            for i, (stop_id, name) in enumerate(STOPS)
        ],
        "routes.txt": [
            {"route_id": rid, "agency_id": "CS", "route_short_name": short, "route_long_name": long, "route_type": "3"}
            for rid, short, long in ROUTES
        ],
        "trips.txt": [
            {"route_id": "601", "service_id": "WEEKDAYS", "trip_id": "morning", "trip_headsign": "Caulfield campus"},
            {"route_id": "601", "service_id": "DAILY", "trip_id": "back", "trip_headsign": ""},
            {"route_id": "601", "service_id": "DAILY", "trip_id": "evening", "trip_headsign": "Caulfield campus"},
            {"route_id": "NIGHT", "service_id": "DAILY", "trip_id": "late", "trip_headsign": "City"},
            {"route_id": "NIGHT", "service_id": "DAILY", "trip_id": "early", "trip_headsign": "City"},
        ],
        "stop_times.txt": [
            {
                "trip_id": trip,
                "arrival_time": time,
                "departure_time": time,
                "stop_id": stop,
                "stop_sequence": str(sequence),
            }
            for trip, stops in calls.items()
            for sequence, (stop, time) in enumerate(stops, start=1)
        ],
        "calendar.txt": [
            {"service_id": "WEEKDAYS", **weekdays, **weekend, **span},
            {"service_id": "DAILY", **every_day, **span},
        ],
        "calendar_dates.txt": [
            {"service_id": "WEEKDAYS", "date": yyyymmdd(removed_on(around)), "exception_type": "2"},
        ],
    }


def removed_on(around: dt.date) -> dt.date:
    """The holiday: the first weekday after `around`."""
    day = around + dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def feed_bytes(around: dt.date, change=None) -> bytes:
    """The feed as a ZIP; `change(tables)` may alter the tables first."""
    files = tables(around)
    if change:
        change(files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, rows in files.items():
            text = io.StringIO()
            columns = list(dict.fromkeys(column for row in rows for column in row))
            writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\r\n")
            writer.writeheader()
            writer.writerows(rows)
            archive.writestr(name, text.getvalue())
    return buffer.getvalue()


def write_feed(path: Path, around: dt.date, change=None) -> Path:
    path.write_bytes(feed_bytes(around, change))
    return path

#!/usr/bin/env python3
"""Turn the records written by Benchmarks/run into the results table.

usage: report.py RECORDS.tsv [OUT.md] [--save RUN.json] [--quiet QUIET_RUN.json]
       report.py --from RUN.json [OUT.md] [--quiet QUIET_RUN.json]
       report.py --parse WRK_OUTPUT.txt      (debug: print what was parsed)

--save keeps what the table is made of (its rows, notes, targets; the wrk outputs the records name are in the run's
temp dir, gone after it), so that --from makes the table again. --quiet adds, beside each read's ratios, those of a
run with both servers quiet (`BENCH_QUIET=1`: Quad at warning, nginx's access log off), as issue 41 asks: the quiet
variant as a second column.

RECORDS.tsv lines (tab-separated):
  wrk   name mode quad_wrk_output nginx_wrk_output errors
  row   name quad_rps nginx_rps quad_p50 nginx_p50 quad_p99 nginx_p99 errors
  note  text
  meta  key value
  value name key number         (an extra metric of a row, usable in targets)
  target expression label       (checked against the rows, listed under the table)
A target expression is `SCENARIO.METRIC OP FACTOR * SCENARIO.METRIC` or
`SCENARIO.METRIC OP NUMBER`, OP one of >= <= == > <; METRIC is q_rps, n_rps,
q_p50, n_p50, q_p99, n_p99 (latencies in microseconds), q_cpu_us, n_cpu_us (server
CPU time per request, from a "bench: server CPU seconds ..." line that Benchmarks/run
appends to each wrk output) or a `value` key.
A wrk output path of "-" means "no run for that server". Exit status is 1 when
any scenario has an error (unexpected status, socket errors, no output), else 0.
Standard library only.
"""

import json
import os
import re
import sys

_UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_DUR = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(us|ms|s|m|h)\s*$")


def parse_duration_us(text):
    """'635.91us' / '1.20ms' / '2.00s' -> microseconds (float), None if unparsable."""
    if text is None:
        return None
    m = _DUR.match(text)
    if not m:
        return None
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_wrk(text):
    """Parse `wrk --latency` output into a dict (missing values are None)."""
    out = {
        "rps": None,
        "p50_us": None,
        "p99_us": None,
        "requests": None,
        "bad_status": 0,
        "socket_errors": {},
        "failure": None,
        "cpu_s": None,
        "other_pct": None,
        "steal_pct": None,
    }
    m = re.search(r"^Requests/sec:\s*([0-9.]+)", text, re.M)
    if m:
        out["rps"] = float(m.group(1))
    m = re.search(r"^\s*(\d+) requests in ", text, re.M)
    if m:
        out["requests"] = int(m.group(1))
    dist = text.split("Latency Distribution", 1)
    if len(dist) == 2:
        for pct, val in re.findall(r"^\s*(\d+)%\s+(\S+)\s*$", dist[1], re.M):
            if pct == "50":
                out["p50_us"] = parse_duration_us(val)
            elif pct == "99":
                out["p99_us"] = parse_duration_us(val)
    m = re.search(r"^bench: server CPU seconds during the measured run: ([0-9.]+)", text, re.M)
    if m:
        out["cpu_s"] = float(m.group(1))
    m = re.search(r"^bench: other processes' CPU share during the measured run: ([0-9.]+)%", text, re.M)
    if m:
        out["other_pct"] = float(m.group(1))
    m = re.search(r"^bench: steal during the measured run: ([0-9.]+)%", text, re.M)
    if m:
        out["steal_pct"] = float(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    if m:
        out["bad_status"] = int(m.group(1))
    m = re.search(r"Socket errors:\s*(.*)$", text, re.M)
    if m:
        for kind, count in re.findall(r"(\w+)\s+(\d+)", m.group(1)):
            if int(count):
                out["socket_errors"][kind] = int(count)
    if out["rps"] is None:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        out["failure"] = f"wrk gave no result ({first[:80]})"
    return out


def wrk_errors(server, parsed):
    errs = []
    if parsed["failure"]:
        errs.append(f"{server}: {parsed['failure']}")
    if parsed["bad_status"]:
        errs.append(f"{server}: {parsed['bad_status']} non-2xx/3xx")
    if parsed["socket_errors"]:
        counts = ", ".join(f"{kind} {count}" for kind, count in sorted(parsed["socket_errors"].items()))
        errs.append(f"{server}: socket errors {counts}")
    return errs


def fmt_rps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_lat(us):
    if us is None:
        return "-"
    if us < 1000:
        return f"{us:.0f}us"
    if us < 1e6:
        return f"{us / 1e3:.2f}ms"
    return f"{us / 1e6:.2f}s"


def fmt_cpu(us):
    return "-" if us is None else f"{us:.1f}us"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2fx" % (a / b)


def load_wrk_file(path):
    if path in ("", "-"):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_wrk(f.read())
    except OSError as e:
        return {
            "rps": None,
            "p50_us": None,
            "p99_us": None,
            "requests": None,
            "bad_status": 0,
            "socket_errors": {},
            "failure": f"no wrk output ({e.strerror})",
        }


def build(records_path):
    meta, notes, rows, values, targets = [], [], [], {}, []
    others = []  # (scenario, server, other processes' CPU share %)
    steals = []  # (scenario, server, the CPU time the hypervisor gave other machines, % of the cores' time)
    with open(records_path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw:
                continue
            parts = raw.split("\t")
            kind = parts[0]
            if kind == "meta":
                meta.append((parts[1], parts[2] if len(parts) > 2 else ""))
            elif kind == "note":
                notes.append("\t".join(parts[1:]))
            elif kind == "value" and len(parts) >= 4:
                try:
                    values.setdefault(parts[1], {})[parts[2]] = float(parts[3])
                except ValueError:
                    pass
            elif kind == "target" and len(parts) >= 3:
                targets.append((parts[1], parts[2]))
            elif kind == "wrk":
                parts += [""] * (6 - len(parts))
                _, name, mode, qpath, npath, errtext = parts[:6]
                errs = [e.strip() for e in errtext.split(";") if e.strip()]
                q, n = load_wrk_file(qpath), load_wrk_file(npath)
                for server, d in (("Quad", q), ("nginx", n)):
                    if d and d.get("other_pct") is not None:
                        others.append((name, server, d["other_pct"]))
                    if d and d.get("steal_pct") is not None:
                        steals.append((name, server, d["steal_pct"]))
                if q:
                    errs += wrk_errors("Quad", q)
                if n:
                    errs += wrk_errors("nginx", n)
                q = q or {}
                n = n or {}

                def cpu_us(d):
                    if d.get("cpu_s") is None or not d.get("requests"):
                        return None
                    return d["cpu_s"] * 1e6 / d["requests"]

                rows.append(
                    {
                        "name": name,
                        "q_rps": q.get("rps"),
                        "n_rps": n.get("rps"),
                        "q_p50": q.get("p50_us"),
                        "n_p50": n.get("p50_us"),
                        "q_p99": q.get("p99_us"),
                        "n_p99": n.get("p99_us"),
                        "q_req": q.get("requests"),
                        "n_req": n.get("requests"),
                        "q_cpu_us": cpu_us(q),
                        "n_cpu_us": cpu_us(n),
                        "errors": errs,
                    }
                )
            elif kind == "row":
                parts += [""] * (9 - len(parts))
                _, name, qr, nr, q50, n50, q99, n99, errtext = parts[:9]

                def num(s):
                    try:
                        return float(s)
                    except ValueError:
                        return None

                rows.append(
                    {
                        "name": name,
                        "q_rps": num(qr),
                        "n_rps": num(nr),
                        "q_p50": parse_duration_us(q50),
                        "n_p50": parse_duration_us(n50),
                        "q_p99": parse_duration_us(q99),
                        "n_p99": parse_duration_us(n99),
                        "q_req": None,
                        "n_req": None,
                        "q_cpu_us": None,
                        "n_cpu_us": None,
                        "errors": [e.strip() for e in errtext.split(";") if e.strip()],
                    }
                )
    for r in rows:
        r.update(values.get(r["name"], {}))
    if others:
        worst = max(others, key=lambda o: o[2])
        shares = sorted(o[2] for o in others)
        advice = (
            "; above ~10% the req/s and latency columns are disturbed, compare "
            "CPU/req instead, or rerun on a quiet machine"
            if worst[2] > 10
            else ""
        )
        notes.append(
            "other processes' share of the CPUs during the measured runs: "
            f"median {shares[len(shares) // 2]:.0f}%, max {worst[2]:.0f}% ({worst[0]}, {worst[1]}){advice}"
        )
    if steals:
        shares = sorted(o[2] for o in steals)
        high = [f"{o[0]} ({o[1]}) {o[2]:.0f}%" for o in steals if o[2] > 5]
        notes.append(
            "steal (CPU time this virtual machine waited for while the hypervisor ran others) during the measured "
            f"runs: median {shares[len(shares) // 2]:.0f}%, max {shares[-1]:.0f}%"
            + (f"; above 5%, so the figures of these runs are disturbed: {', '.join(high)}" if high else "")
        )
    return meta, notes, rows, targets


_TARGET = re.compile(
    r"^\s*([\w.-]+)\.(\w+)\s*(>=|<=|==|>|<)\s*"
    r"(?:([0-9]*\.?[0-9]+)\s*\*\s*([\w.-]+)\.(\w+)|([0-9]*\.?[0-9]+))\s*$"
)
_OPS = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}
_SHOW = {">=": "≥", "<=": "≤", "==": "=", ">": ">", "<": "<"}


def fmt_metric(metric, v):
    if v is None:
        return "-"
    if metric.endswith("_rps"):
        return fmt_rps(v)
    if metric[1:] in ("_p50", "_p99"):
        return fmt_lat(v)
    if metric.endswith("_cpu_us"):
        return fmt_cpu(v)
    return f"{v:g}"


def check_target(expr, rows):
    """-> (measured text, needed text, result text, met: True/False/None)."""
    m = _TARGET.match(expr)
    if not m:
        return "-", expr, "invalid target expression", None
    lname, lmetric, op, factor, rname, rmetric, const = m.groups()
    by_name = {r["name"]: r for r in rows}
    left_row = by_name.get(lname)
    right_row = by_name.get(rname) if rname else None
    left = left_row.get(lmetric) if left_row else None
    erred = [n for n, r in ((lname, left_row), (rname, right_row)) if r and r["errors"]]
    if const is not None:
        needed = f"{_SHOW[op]} {const}"
        if left is None:
            return "-", needed, "not measured", None
        met = _OPS[op](left, float(const))
        measured = fmt_metric(lmetric, left)
    else:
        right = right_row.get(rmetric) if right_row else None
        needed = f"{_SHOW[op]} {float(factor):.2f}x"
        if left is None or right is None or right == 0:
            return "-", needed, "not measured", None
        met = _OPS[op](left, float(factor) * right)

        def who(scenario, metric):
            server = {"q_": "Quad", "n_": "nginx"}.get(metric[:2])
            if lname == rname and server:
                return server
            return scenario + (" (nginx)" if server == "nginx" else "")

        measured = (
            f"{left / right:.2f}x ({who(lname, lmetric)} {fmt_metric(lmetric, left)}"
            f" / {who(rname, rmetric)} {fmt_metric(rmetric, right)})"
        )
    result = "met" if met else "MISSED"
    if erred:
        result += f" ({', '.join(dict.fromkeys(erred))} had errors)"
    return measured, needed, result, met


def markdown_table(header, table, right):
    widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(header)]

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.rjust(widths[i]) if i in right else c.ljust(widths[i]))
        return "| " + " | ".join(out) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if i in right else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|"
    return [line(header), sep] + [line(t) for t in table]


def render(meta, notes, rows, targets=(), quiet=None):
    """`quiet`: a run with both servers quiet (`--save`'s dict), whose ratios go beside this run's."""
    quiet_rows = {r["name"]: r for r in quiet["rows"]} if quiet else {}
    header = [
        "scenario",
        "Quad req/s",
        "nginx req/s",
        "ratio (Quad/nginx)",
        "Quad p50",
        "nginx p50",
        "Quad p99",
        "nginx p99",
        "p99 ratio (Quad/nginx)",
        "server CPU/req (Quad / nginx)",
        "status",
    ]
    if quiet:
        header[9:9] = ["ratio, quiet", "p99 ratio, quiet"]
    table = []
    for r in rows:
        q = quiet_rows.get(r["name"], {})
        table.append(
            [
                r["name"],
                fmt_rps(r["q_rps"]),
                fmt_rps(r["n_rps"]),
                fmt_ratio(r["q_rps"], r["n_rps"]),
                fmt_lat(r["q_p50"]),
                fmt_lat(r["n_p50"]),
                fmt_lat(r["q_p99"]),
                fmt_lat(r["n_p99"]),
                fmt_ratio(r["q_p99"], r["n_p99"]),
                f"{fmt_cpu(r.get('q_cpu_us'))} / {fmt_cpu(r.get('n_cpu_us'))}",
                "ok" if not r["errors"] else "ERROR: " + "; ".join(r["errors"]),
            ]
        )
        if quiet:
            table[-1][9:9] = [
                fmt_ratio(q.get("q_rps"), q.get("n_rps")),
                fmt_ratio(q.get("q_p99"), q.get("n_p99")),
            ]
    # A run on PostgreSQL says so in its title, so that it is not mistaken for one on SQLite.
    database = dict(meta).get("database", "")
    lines = ["# Quad vs nginx" + (" (PostgreSQL)" if database.startswith("PostgreSQL") else ""), ""]
    for k, v in meta:
        lines.append(f"- {k}: {v}")
    if quiet:
        theirs = dict(quiet["meta"])
        lines.append(
            f"- quiet: the ratios of a run with both servers quiet (BENCH_QUIET=1), {theirs.get('date', '?')},"
            f" commit {theirs.get('commit', '?')}; its table: {quiet.get('table', '?')}"
        )
    lines += [""] + markdown_table(header, table, set(range(1, len(header) - 1)))
    lines += [
        "",
        "ratio > 1 means Quad serves more req/s than nginx; "
        "p99 ratio > 1 means Quad's p99 latency is higher. Server CPU/req: CPU time "
        "(user+system) of the server's processes during the measured run / requests "
        "answered; it depends much less than req/s on what else shares the cores.",
    ]
    if notes:
        lines.append("")
        lines += ["- note: " + n for n in notes]
    if targets:
        checked = [(label,) + check_target(expr, rows) for expr, label in targets]
        met = sum(1 for c in checked if c[4] is True)
        lines += ["", "## Targets", ""]
        lines += markdown_table(["target", "measured", "needed", "result"], [list(c[:4]) for c in checked], set())
        lines += ["", f"targets met: {met} of {len(checked)}"]
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) == 3 and argv[1] == "--parse":
        with open(argv[2], encoding="utf-8", errors="replace") as f:
            print(json.dumps(parse_wrk(f.read()), indent=2))
        return 0
    args, options = [], {}
    rest = iter(argv[1:])
    for arg in rest:
        if arg in ("--save", "--quiet", "--from"):
            options[arg] = next(rest, None)
            if options[arg] is None:
                print(__doc__, file=sys.stderr)
                return 2
        else:
            args.append(arg)
    if len(args) not in ((0, 1) if "--from" in options else (1, 2)):
        print(__doc__, file=sys.stderr)
        return 2
    if "--from" in options:
        with open(options["--from"], encoding="utf-8") as f:
            run = json.load(f)
        meta, notes, rows, targets = run["meta"], run["notes"], run["rows"], run["targets"]
        out = args[0] if args else None
    else:
        meta, notes, rows, targets = build(args[0])
        out = args[1] if len(args) == 2 else None
    quiet = None
    if options.get("--quiet"):
        with open(options["--quiet"], encoding="utf-8") as f:
            quiet = json.load(f)
    if options.get("--save"):
        with open(options["--save"], "w", encoding="utf-8") as f:
            table = os.path.basename(out) if out else None
            json.dump({"meta": meta, "notes": notes, "rows": rows, "targets": targets, "table": table}, f)
    text = render(meta, notes, rows, targets, quiet)
    sys.stdout.write(text)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

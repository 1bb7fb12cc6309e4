#!/usr/bin/python3
"""strata-bench's pictures: tools/plot_bench.py RESULTS.json DIR

Reads the records strata-bench wrote (--json; --plot runs this script) and
writes into DIR:
  time.png          median time per benchmark, one line per runtime and
                    version, over the thread counts (log scale)
  speedup.png       speedup over serial per runtime against the ideal line
                    (benchmarks that have a serial version)
  vs-best-peer.png  strata's median over the best peer's at each benchmark's
                    largest thread count (below 1: strata is faster)
  index.html        one page: the machine (DIR/machine.txt), the table, the plots
Only checked records are drawn (a failed check is listed, not plotted).
Needs matplotlib (Debian: python3-matplotlib).
"""
import html
import json
import math
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("plot_bench: matplotlib is missing: apt-get install python3-matplotlib", file=sys.stderr)
    sys.exit(1)


def series_key(r):
    return (r["runtime"], r["params"])


def label(runtime, params, base):
    extra = params[len(base):].strip() if params.startswith(base) else params
    return runtime + (" " + extra if extra else "")


def grid(n):
    cols = min(4, max(1, n))
    return cols, int(math.ceil(n / cols))


def group_of(r, serial_params):
    """The serial configuration a record compares with: the longest serial
    params that its params start with (bank's dist=uniform and dist=zipf are
    two groups); "" when the benchmark has no serial version."""
    best = ""
    for p in serial_params:
        if (r["params"] == p or r["params"].startswith(p + " ")) and len(p) >= len(best):
            best = p
    return best


def by_bench(records):
    """(bench, group) -> records, in the order of the run."""
    serial = {}
    for r in records:
        if r["runtime"] == "serial":
            serial.setdefault(r["bench"], []).append(r["params"])
    out = {}
    for r in records:
        out.setdefault((r["bench"], group_of(r, serial.get(r["bench"], []))), []).append(r)
    return out


def title_of(key):
    bench, group = key
    return bench + (" (" + group + ")" if group else "")


def plot_time(benches, path):
    cols, rows = grid(len(benches))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, (key, rs) in zip(axes.flat, benches.items()):
        base = key[1]
        lines = {}
        for r in rs:
            lines.setdefault(series_key(r), []).append((r["threads"], r["median_s"] * 1e3))
        for (runtime, params), pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label(runtime, params, base))
        ax.set_title(title_of(key), fontsize=8)
        ax.set_xlabel("threads", fontsize=8)
        ax.set_ylabel("median ms", fontsize=8)
        ax.set_yscale("log")
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(benches):]:
        ax.axis("off")
    fig.suptitle("median time per benchmark, runtime and thread count", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_speedup(benches, path):
    with_serial = {b: rs for b, rs in benches.items() if any(r["runtime"] == "serial" for r in rs)}
    if not with_serial:
        return False
    cols, rows = grid(len(with_serial))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, (key, rs) in zip(axes.flat, with_serial.items()):
        serial = min(r["median_s"] for r in rs if r["runtime"] == "serial")
        base = key[1]
        lines = {}
        for r in rs:
            if r["runtime"] != "serial":
                lines.setdefault(series_key(r), []).append((r["threads"], serial / r["median_s"]))
        top = max([p[0] for pts in lines.values() for p in pts] + [1])
        ax.plot([1, top], [1, top], "k--", linewidth=0.8, label="ideal")
        for (runtime, params), pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label(runtime, params, base))
        ax.set_title(title_of(key), fontsize=8)
        ax.set_xlabel("threads", fontsize=8)
        ax.set_ylabel("speedup over serial", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(with_serial):]:
        ax.axis("off")
    fig.suptitle("speedup over serial against the ideal", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def ratios(benches):
    """(label, strata / best peer) at each benchmark's largest thread count."""
    out = []
    groups_of = {}
    for bench, group in benches:
        groups_of.setdefault(bench, []).append(group)
    for (bench, group), rs in benches.items():
        # Short labels: the group's last word only where a benchmark has
        # several groups (bank's dist=...), then what each side adds to it.
        name = bench + (" " + group.split()[-1] if len(groups_of[bench]) > 1 and group else "")
        top = max(r["threads"] for r in rs)
        at_top = [r for r in rs if r["threads"] == top]
        peers = [r for r in at_top if r["runtime"] not in ("strata", "serial")]
        if not peers:
            continue
        best = min(peers, key=lambda r: r["median_s"])
        for s in (r for r in at_top if r["runtime"] == "strata"):
            out.append(("%s: %s @%d vs %s" % (name, label("strata", s["params"], group), top,
                                               label(best["runtime"], best["params"], group)),
                        s["median_s"] / best["median_s"]))
    return out


def plot_ratio(rows, path):
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.4))
    names = [r[0] for r in rows]
    values = [r[1] for r in rows]
    colors = ["tab:green" if v <= 1.0 else "tab:red" for v in values]
    ax.barh(range(len(rows)), values, color=colors)
    ax.axvline(1.0, color="k", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=6)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("strata median / best peer median (below 1: strata faster)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_html(dir_, records, failed, pictures, rows):
    machine_path = os.path.join(dir_, "machine.txt")
    machine = open(machine_path).read() if os.path.exists(machine_path) else "(no machine.txt)"
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>strata-bench run</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:12px}"
           "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l{text-align:left}"
           "pre{background:#f6f6f6;padding:1em;font-size:11px}</style></head><body>",
           "<h1>strata-bench run</h1>",
           "<p>%d records, %s</p>" % (len(records), "every check ok" if not failed else
                                      "%d FAILED: %s" % (len(failed), html.escape(", ".join(failed)))),
           "<h2>Machine and placement</h2><pre>%s</pre>" % html.escape(machine)]
    for title, name in pictures:
        out.append("<h2>%s</h2><img src='%s' style='max-width:100%%'>" % (html.escape(title), name))
    if rows:
        out.append("<h2>strata against the best peer</h2><table><tr><th>configuration</th><th>ratio</th></tr>")
        for n, v in rows:
            out.append("<tr><td class='l'>%s</td><td>%.2f</td></tr>" % (html.escape(n), v))
        out.append("</table>")
    out.append("<h2>Records</h2><table><tr><th>bench</th><th>params</th><th>runtime</th><th>threads</th>"
               "<th>median ms</th><th>min ms</th><th>max ms</th><th>check</th><th>rate</th></tr>")
    for r in records:
        rate = "%.3g %s" % (r["rate"], r["rate_unit"]) if "rate" in r else ""
        out.append("<tr><td class='l'>%s</td><td class='l'>%s</td><td class='l'>%s</td><td>%d</td><td>%.3f</td>"
                   "<td>%.3f</td><td>%.3f</td><td class='l'>%s</td><td>%s</td></tr>"
                   % (html.escape(r["bench"]), html.escape(r["params"]), html.escape(r["runtime"]), r["threads"],
                      r["median_s"] * 1e3, r["min_s"] * 1e3, r["max_s"] * 1e3, html.escape(r["check"]), rate))
    out.append("</table></body></html>")
    with open(os.path.join(dir_, "index.html"), "w") as f:
        f.write("\n".join(out))


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        records = json.load(open(sys.argv[1]))
    except (OSError, ValueError) as e:
        print("plot_bench: cannot read %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
    dir_ = sys.argv[2]
    ok = [r for r in records if r.get("check") == "ok" and r.get("median_s")]
    failed = ["%s %s %s@%d" % (r["bench"], r["params"], r["runtime"], r["threads"])
              for r in records if r.get("check") != "ok"]
    benches = by_bench(ok)
    if not benches:
        print("plot_bench: no checked record to plot", file=sys.stderr)
        sys.exit(1)
    pictures = [("Median time", "time.png")]
    plot_time(benches, os.path.join(dir_, "time.png"))
    if plot_speedup(benches, os.path.join(dir_, "speedup.png")):
        pictures.append(("Speedup over serial", "speedup.png"))
    rows = ratios(benches)
    if plot_ratio(rows, os.path.join(dir_, "vs-best-peer.png")):
        pictures.append(("strata over the best peer", "vs-best-peer.png"))
    write_html(dir_, records, failed, pictures, rows)
    print("plot_bench: %s: %s, index.html" % (dir_, ", ".join(p[1] for p in pictures)))


main()

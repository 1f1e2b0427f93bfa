#!/usr/bin/env python3
"""Check a ddlsim trace (Chrome trace-event JSON, gzip-compressed if its
name ends in .gz): it parses; every slice has ts >= 0 and dur >= 0, each
with exactly three decimals (whole nanoseconds); slices on one track
(pid, tid) do not overlap (each ends before the next begins, to the
nanosecond, so begin/end pairs balance); every flow
start has exactly one finish; every process has a name and every track a
thread name; the memory counter is non-negative; link utilisation is 0..100 %. --partial: a flow may lack its other
end (a --trace-ranks selection). Prints a summary line
"ranks=R slices=S flows=F counters=C mem_peak_GB=M links=L" or what is wrong."""
import collections
import decimal
import gzip
import json
import re
import sys

path = sys.argv[1]
raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read().decode()
# every time printed as microseconds with exactly three decimals
bad_ts = re.findall(r'"(?:ts|dur)":(?!-?\d+\.\d{3}[,}])[^,}]*', raw)
assert not bad_ts, f"times not in whole nanoseconds: {bad_ts[:5]}"
d = json.loads(raw, parse_float=decimal.Decimal)  # numbers as written, no binary rounding
ev = d["traceEvents"]


def ns(us):
    """Microseconds with three decimals to integer nanoseconds, exactly."""
    return int(us * 1000)


tracks = collections.defaultdict(list)
flows = collections.Counter()
names, threads = set(), set()
mem_peak = collections.defaultdict(float)
links = set()
for e in ev:
    ph = e["ph"]
    if ph == "X":
        assert e["ts"] >= 0 and e["dur"] >= 0, e
        b = ns(e["ts"])
        tracks[(e["pid"], e["tid"])].append((b, b + ns(e["dur"])))
    elif ph in "sf":
        flows[e["id"]] += 1 if ph == "s" else 1000
    elif ph == "C" and "GB" in e["args"]:
        v = e["args"]["GB"]
        assert v >= 0, e
        mem_peak[e["pid"]] = max(mem_peak[e["pid"]], v)
    elif ph == "C":
        v = e["args"]["util"]
        assert 0 <= v <= 100.05, e
        links.add(e["name"])
    elif ph == "M":
        if e["name"] == "process_name" and e["args"]["name"].startswith("rank "):
            names.add(e["pid"])
        elif e["name"] == "thread_name":
            threads.add((e["pid"], e["tid"]))
for k, sl in tracks.items():
    sl.sort()
    for a, b in zip(sl, sl[1:]):
        assert a[1] <= b[0], f"overlapping slices on track {k} (ns): {a} {b}"
    assert k[0] in names, f"process {k[0]} has no name"
    assert k in threads, f"track {k} has no name"
# with --trace-ranks, a flow whose other end is not recorded has one half
partial = "--partial" in sys.argv[2:]
bad = [i for i, n in flows.items() if n != 1001 and not (partial and n in (1, 1000))]
assert not bad, f"flows without exactly one start and one finish: {bad[:5]}"
print(f"ranks={len(names)} slices={sum(len(s) for s in tracks.values())} flows={len(flows)} "
      f"counters={len(mem_peak)} mem_peak_GB={max(mem_peak.values()) if mem_peak else 0:.4f} "
      f"links={len(links)}")

#!/usr/bin/env python3
"""tf32_whatif.py: why the TF32 GEMM class misses issue 39's 10 % target.

Reads the H100 and H200 GEMM files of this folder and prints, for the TF32
rows (class gemm_tf32) and the 16-bit rows measured beside them:

  1. the measured TF32 / bf16 time ratio at equal shapes, by size;
  2. the error by size class with and without the preset's kernel latency;
  3. the efficiency of the shapes that fill at least 2 or 8 full waves of
     128 x 256 tiles (where the wave model's price is the flat ceiling);
  4. what-ifs of the GEMM price (a TF32 ceiling of its own, another tile,
     no split-K, a per-tile fixed time, the output written after the
     mainloop), median |error| per GPU;
  5. two lower bounds on what a price of this form can reach: TF32 as a
     constant times the measured bf16 time of the same shape (the best
     constant), and the best of a grid over the what-if family of 4;
  6. the H200 grid's 4096 x 4096 rows as a line in k, per dtype: fixed
     time and marginal rate;
  7. where in the H200 GEMM section the TF32 rows ran, and the SM clock
     the clock log shows there (calib/profiles/h200-2026-11-26).

The price is a replica of models/cost_roofline.c gemm_compute_time() and
roofline() for a GEMM op as tests/kernel-ops.h builds it, at the preset's
fields (gpus/<preset>.json). Before printing, the replica is checked
against ddlsim's own price of every such row (the POINTS file that
`DDLSIM_KERNEL_POINTS=POINTS build/tests/test-kernels` writes): it stops
if any row differs by more than 1e-6 relative. Nothing is written back;
section 5's grid search is a lower bound on the form of the price, not a
price. It is the analysis behind validation/kernels/TF32.md.

usage: tf32_whatif.py REPO POINTS
"""
import csv
import datetime
import json
import math
import os
import statistics as st
import sys

FILES = [("xla-h100-gemm.csv", "bf16"), ("xla-h100-tf32-gemm.csv", "tf32"),
         ("torchperf-h100-tf32-gemm.csv", "tf32"), ("calib-h200-gemm.csv", "bf16"),
         ("calib-h200-gemm.csv", "tf32")]
BYTES = {"bf16": 2, "tf32": 4}


def preset(repo, name):
    with open(os.path.join(repo, "gpus", name + ".json")) as f:
        j = json.load(f)
    e = j["efficiency"]
    return dict(sms=j["sm_count"], peak={d: j["peak_tflops"][d] * 1e12 for d in BYTES},
                bw=j["hbm_bw_GBps"] * 1e9, emax=e["gemm_max"], mem=e["mem_max"],
                tile=tuple(e["gemm_tile"]), launch=e["kernel_launch_us"] * 1e-6)


def price(g, dt, b, m, n, k, emax=None, tile=None, split_k=True, tfix=0.0, launch=None,
          serial=False):
    """Seconds of one GEMM (cost_roofline_time_isolated), with what-ifs;
    serial: the output written after the mainloop (gpu.h
    gemm_epilogue_serial, at the same mainloop ceiling)."""
    emax = g["emax"] if emax is None else emax
    tm, tn = g["tile"] if tile is None else tile
    launch = g["launch"] if launch is None else launch
    sms, peak = g["sms"], g["peak"][dt]
    tiles, kk = math.ceil(m / tm) * math.ceil(n / tn) * b, k
    split = min(math.floor(sms / tiles), math.floor(k / 512))
    if split > 1 and split_k:
        tiles, kk = tiles * split, k / split
    waves = math.ceil(tiles / sms)
    q = b * m * n * k / (waves * sms * tm * tn * kk)
    comp = 2 * b * m * n * k / (peak * emax) / min(q, 1) + waves * tfix
    mem = b * ((m * k + k * n) + m * n) * BYTES[dt] / (g["bw"] * g["mem"])
    if serial:
        out = b * m * n * BYTES[dt] / (g["bw"] * g["mem"])
        return max(mem - out, comp) + out + launch
    return max(comp, mem) + launch


def load(repo):
    rows = []
    for fn, dt in FILES:
        path = os.path.join(repo, "validation", "kernels", fn)
        with open(path) as f:
            for line, r in enumerate(csv.DictReader(f), start=2):
                if r["dtype"] != dt or r.get("trans", "NN") != "NN":
                    continue
                b, m, n, k = (int(r[c]) for c in ("batch", "m", "n", "k"))
                t = (float(r["time_us"]) * 1e-6 if r["time_us"] else
                     2 * b * m * n * k / (float(r["tflops"]) * 1e12))
                rows.append(dict(where="%s:%d" % (os.path.abspath(path), line),
                                 gpu=r["gpu"], dt=dt, b=b, m=m, n=n, k=k, t=t))
    return rows


def check(rows, gpus, points):
    with open(points) as f:
        ddl = {r["where"]: float(r["ddlsim_isolated_s"]) for r in csv.DictReader(f)}
    for r in rows:
        mine = price(gpus[r["gpu"]], r["dt"], r["b"], r["m"], r["n"], r["k"])
        if r["where"] not in ddl:
            sys.exit("%s: not in %s (run test-kernels from this checkout)" % (r["where"], points))
        if abs(mine / ddl[r["where"]] - 1) > 1e-6:
            sys.exit("%s: replica %.6g s, ddlsim %.6g s" % (r["where"], mine, ddl[r["where"]]))
    print("replica = ddlsim's price on all %d rows" % len(rows))


def size_class(r):
    gf = 2 * r["b"] * r["m"] * r["n"] * r["k"] / 1e9
    return ("b>1 " if r["b"] > 1 else "b=1 ") + ("small" if gf < 2 else "mid" if gf < 69 else "large")


def stats(errs):
    return "n %3d  median %+6.1f %%  |err| %5.1f %%" % (
        len(errs), 100 * st.median(errs), 100 * st.median([abs(e) for e in errs]))


def ratios(rows):
    print("\n1. measured TF32 / bf16 time at equal shapes (the price says 2.0 less latency)")
    bf = {(r["gpu"], r["b"], r["m"], r["n"], r["k"]): r["t"] for r in rows if r["dt"] == "bf16"}
    for gpu in sorted({r["gpu"] for r in rows}):
        bins = {}
        for r in rows:
            key = (gpu, r["b"], r["m"], r["n"], r["k"])
            if r["gpu"] == gpu and r["dt"] == "tf32" and key in bf:
                gf = 2 * r["b"] * r["m"] * r["n"] * r["k"] / 1e9
                lab = "< 0.5" if gf < 0.5 else "0.5-4" if gf < 4 else "4-64" if gf < 64 else ">= 64"
                bins.setdefault(lab, []).append(r["t"] / bf[key])
        for lab in ("< 0.5", "0.5-4", "4-64", ">= 64"):
            if lab in bins:
                print("  %-16s %6s GFLOP  n %3d  median %.2f" % (gpu, lab, len(bins[lab]), st.median(bins[lab])))
        byk = {}
        for r in rows:
            key = (gpu, r["b"], r["m"], r["n"], r["k"])
            if r["gpu"] == gpu and r["dt"] == "tf32" and key in bf and gpu.startswith("h100"):
                byk.setdefault(r["k"], []).append(r["t"] / bf[key])
        if byk:
            print("  %-16s by k: %s" % (gpu, "  ".join("k %d n %d median %.2f" % (
                k, len(v), st.median(v)) for k, v in sorted(byk.items()))))


def by_class(rows, gpus):
    print("\n2. error by size class, with the preset's latency and without it")
    for gpu in sorted({r["gpu"] for r in rows}):
        for dt in BYTES:
            sel = [r for r in rows if r["gpu"] == gpu and r["dt"] == dt]
            for cls in sorted({size_class(r) for r in sel}):
                c = [r for r in sel if size_class(r) == cls]
                e4 = [price(gpus[gpu], dt, r["b"], r["m"], r["n"], r["k"]) / r["t"] - 1 for r in c]
                e0 = [price(gpus[gpu], dt, r["b"], r["m"], r["n"], r["k"], launch=0) / r["t"] - 1 for r in c]
                print("  %-16s %-4s %-9s n %3d  median %+6.1f %%, without latency %+6.1f %%" % (
                    gpu, dt, cls, len(c), 100 * st.median(e4), 100 * st.median(e0)))


def full_waves(rows, gpus):
    print("\n3. efficiency (FLOP/s / dense peak) of shapes with >= W full waves of the tile")
    for w in (8, 2):
        for gpu in sorted({r["gpu"] for r in rows}):
            g = gpus[gpu]
            for dt in BYTES:
                effs = sorted(2 * r["b"] * r["m"] * r["n"] * r["k"] / (r["t"] * g["peak"][dt])
                              for r in rows if r["gpu"] == gpu and r["dt"] == dt and
                              (r["m"] // g["tile"][0]) * (r["n"] // g["tile"][1]) * r["b"] >= w * g["sms"])
                if len(effs) < 3:
                    continue
                q = st.quantiles(effs, n=4)
                print("  W %d %-16s %-4s n %3d  min %.3f  quartiles %.3f %.3f %.3f  max %.3f" % (
                    w, gpu, dt, len(effs), effs[0], q[0], q[1], q[2], effs[-1]))


def whatifs(rows, gpus):
    print("\n4. what-ifs of the TF32 price: median |err| per GPU (class gemm_tf32)")
    tf = [r for r in rows if r["dt"] == "tf32"]
    cases = [("today", {})]
    cases += [("TF32 ceiling %.3f" % e, dict(emax=e)) for e in (0.76, 0.72, 0.70, 0.65)]
    cases += [("tile %dx%d" % t, dict(tile=t)) for t in ((128, 128), (256, 128), (64, 128))]
    cases += [("tile 128x128, ceiling 0.70", dict(tile=(128, 128), emax=0.70))]
    cases += [("no split-K", dict(split_k=False))]
    cases += [("per-tile fixed %g us" % (x * 1e6), dict(tfix=x)) for x in (1e-6, 2e-6, 3e-6)]
    cases += [("output after the mainloop", dict(serial=True))]
    cases += [("128x128, no split-K, serial", dict(tile=(128, 128), split_k=False, serial=True))]
    for name, kw in cases:
        out = []
        for gpu in ("h100-sxm5-80gb", "h200-sxm5-141gb"):
            e = [price(gpus[gpu], "tf32", r["b"], r["m"], r["n"], r["k"], **kw) / r["t"] - 1
                 for r in tf if r["gpu"] == gpu]
            out.append("%s %s" % (gpu.split("-")[0], stats(e)))
        print("  %-28s %s" % (name, "   ".join(out)))


def bounds(rows, gpus):
    print("\n5. lower bounds of the price's family (median |err|, TF32 rows)")
    for gpu in ("h100-sxm5-80gb", "h200-sxm5-141gb"):
        bf = {(r["b"], r["m"], r["n"], r["k"]): r["t"] for r in rows
              if r["gpu"] == gpu and r["dt"] == "bf16"}
        pairs = [(r["t"], bf[(r["b"], r["m"], r["n"], r["k"])]) for r in rows
                 if r["gpu"] == gpu and r["dt"] == "tf32" and (r["b"], r["m"], r["n"], r["k"]) in bf]
        best = min((st.median([abs(c * b / t - 1) for t, b in pairs]), c)
                   for c in [1.5 + 0.01 * i for i in range(120)])
        print("  %-16s TF32 = c x measured bf16, same shape: best c %.2f  |err| %4.1f %% (n %d)" % (
            gpu, best[1], 100 * best[0], len(pairs)))
        tf = [r for r in rows if r["gpu"] == gpu and r["dt"] == "tf32"]
        grid = []
        for emax in (0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90):
            for tfix in (0, 1e-6, 2e-6, 3e-6, 4e-6, 6e-6, 8e-6):
                for tile in ((128, 256), (128, 128), (256, 128)):
                    for split_k in (True, False):
                        for serial in (False, True):
                            kw = dict(emax=emax, tfix=tfix, tile=tile, split_k=split_k, serial=serial)
                            e = [price(gpus[gpu], "tf32", r["b"], r["m"], r["n"], r["k"], **kw) / r["t"] - 1
                                 for r in tf]
                            grid.append((st.median([abs(x) for x in e]), kw))
        e, kw = min(grid, key=lambda x: x[0])
        print("  %-16s best of %d what-if combinations: |err| %4.1f %% at %s" % (gpu, len(grid), 100 * e, kw))


def k_line(rows):
    print("\n6. H200 grid, m = n = 4096: time = fixed + k / rate (least squares over k >= 4096)")
    for dt in BYTES:
        pts = sorted((r["k"], r["t"]) for r in rows if r["gpu"] == "h200-sxm5-141gb" and
                     r["dt"] == dt and r["b"] == 1 and r["m"] == 4096 and r["n"] == 4096)
        fit = [(k, t) for k, t in pts if k >= 4096]
        mk = st.mean(k for k, _ in fit)
        mt = st.mean(t for _, t in fit)
        slope = sum((k - mk) * (t - mt) for k, t in fit) / sum((k - mk) ** 2 for k, _ in fit)
        fixed = mt - slope * mk
        rate = 2 * 4096 * 4096 / slope
        peak = 494.7e12 if dt == "tf32" else 989.4e12
        print("  %-4s fixed %5.1f us, marginal %4.0f TFLOP/s (%.3f of %.1f); time / line - 1: %s" % (
            dt, fixed * 1e6, rate / 1e12, rate / peak, peak / 1e12,
            " ".join("k%d %+.0f%%" % (k, 100 * (t / (fixed + slope * k) - 1)) for k, t in pts)))


def section_clock(repo, rows, gpus):
    """The GEMM section's rows ran in file order (calib/profiles/
    h200-sxm5-141gb.csv); each point is 5 warm-up and 20 timed calls.
    Its start is that point's 25 x time summed over the points before it,
    plus a per-point overhead o spread evenly: none, or the section's
    wall time less the summed calls over its points."""
    print("\n7. H200 GEMM section: where the TF32 grid ran, SM clock there (clock log, 250 ms)")
    d = os.path.join(repo, "calib", "profiles")
    steps = {}
    with open(os.path.join(d, "h200-2026-11-26", "steps.log")) as f:
        for line in f:
            t, what = line.split(" ", 1)
            steps[what.strip()] = float(t)
    t0, t1 = steps["start full-gemm (limit 365 s)"], steps["end full-gemm rc=0"]
    with open(os.path.join(d, "h200-sxm5-141gb.csv")) as f:
        prof = [p for p in csv.DictReader(f) if p["section"] == "gemm"]
    clk = []
    with open(os.path.join(d, "h200-2026-11-26", "clocks.csv")) as f:
        for r in list(csv.reader(f))[1:]:
            t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
            t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
            if t0 <= t <= t1:
                clk.append((t - t0, int(r[1])))
    calls = sum(25 * float(p["time_s"]) for p in prof)
    for o in (0.0, (t1 - t0 - calls) / len(prof)):
        cum, blocks = 0.0, []  # contiguous runs of one (dtype, layout): [key, start, end]
        for i, p in enumerate(prof):
            start = cum + i * o
            cum += 25 * float(p["time_s"])
            key = (p["dtype"], p["pass"])
            if not blocks or blocks[-1][0] != key:
                blocks.append([key, start, start])
            blocks[-1][2] = cum + (i + 1) * o
        first = {}
        for key, a, b in blocks:
            first.setdefault(key, (a, b))
        windows = [("tf32 NN grid", first[("tf32", "NN")]), ("bf16 NN grid", first[("bf16", "NN")]),
                   ("the rest", (first[("fp8_e4m3", "TN")][1], t1 - t0))]
        # each compute-bound TF32 row's error against the mean clock
        # sampled over its estimated calls (the nearest sample if none)
        g = gpus["h200-sxm5-141gb"]
        tf = {(r["m"], r["n"], r["k"]): r for r in rows
              if r["gpu"] == "h200-sxm5-141gb" and r["dt"] == "tf32"}
        cum, xs, ys = 0.0, [], []
        for i, p in enumerate(prof):
            a = cum + i * o
            cum += 25 * float(p["time_s"])
            key = (int(p["m"]), int(p["n"]), int(p["k"]))
            if p["dtype"] != "tf32" or key not in tf or 2 * key[0] * key[1] * key[2] < 64e9:
                continue
            c = [x for t, x in clk if a - 0.125 <= t <= cum + i * o + 0.125]
            xs.append(st.mean(c) if c else min(clk, key=lambda x: abs(x[0] - a))[1])
            r = tf[key]
            ys.append(price(g, "tf32", 1, *key) / r["t"] - 1)
        corr = st.correlation(xs, ys)
        print("  o %4.1f ms  TF32 rows >= 64 GFLOP: n %d, correlation of estimated clock and error %+.2f" % (
            o * 1e3, len(xs), corr))
        for name, (a, b) in windows:
            c = sorted(x for t, x in clk if a <= t <= b)
            q = st.quantiles(c, n=10, method="inclusive")
            print("  o %4.1f ms  %-12s %5.1f-%5.1f s of %.0f  SM clock n %3d  min %4d  p10 %4.0f  "
                  "median %4.0f  p90 %4.0f  max %4d MHz" % (o * 1e3, name, a, b, t1 - t0, len(c),
                                                           c[0], q[0], st.median(c), q[-1], c[-1]))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, points = sys.argv[1], sys.argv[2]
    rows = load(repo)
    gpus = {g: preset(repo, g) for g in {r["gpu"] for r in rows}}
    check(rows, gpus, points)
    ratios(rows)
    by_class(rows, gpus)
    full_waves(rows, gpus)
    whatifs(rows, gpus)
    bounds(rows, gpus)
    k_line(rows)
    section_clock(repo, rows, gpus)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tf32_whatif.py: why the TF32 GEMM class misses issue 39's 10 % target.

Reads the H100 and H200 GEMM files of this folder and prints, for the TF32
rows (class gemm_tf32) and the 16-bit rows measured beside them:

  1. the measured TF32 / bf16 time ratio at equal shapes, by size;
  2. the error by size class with and without the preset's kernel latency;
  3. the efficiency of the shapes that fill at least 2 or 8 full waves of
     128 x 256 tiles (where the wave model's price is the flat ceiling);
  4. what-ifs of the GEMM price (a TF32 ceiling of its own, another tile,
     no split-K, a per-tile fixed time), median |error| per GPU.

The price is a replica of models/cost_roofline.c gemm_compute_time() and
roofline() for a GEMM op as tests/kernel-ops.h builds it, at the preset's
fields (gpus/<preset>.json). Before printing, the replica is checked
against ddlsim's own price of every such row (the POINTS file that
`DDLSIM_KERNEL_POINTS=POINTS build/tests/test-kernels` writes): it stops
if any row differs by more than 1e-6 relative. Nothing here is fitted or
written back; it is the analysis behind validation/kernels/TF32.md.

usage: tf32_whatif.py REPO POINTS
"""
import csv
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


def price(g, dt, b, m, n, k, emax=None, tile=None, split_k=True, tfix=0.0, launch=None):
    """Seconds of one GEMM (cost_roofline_time_isolated), with what-ifs."""
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
    for name, kw in cases:
        out = []
        for gpu in ("h100-sxm5-80gb", "h200-sxm5-141gb"):
            e = [price(gpus[gpu], "tf32", r["b"], r["m"], r["n"], r["k"], **kw) / r["t"] - 1
                 for r in tf if r["gpu"] == gpu]
            out.append("%s %s" % (gpu.split("-")[0], stats(e)))
        print("  %-28s %s" % (name, "   ".join(out)))


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


if __name__ == "__main__":
    main()

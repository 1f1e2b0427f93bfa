#!/usr/bin/env python3
"""gemm_shape.py: what a Hopper GEMM kernel costs beyond its waves of tiles.

Reads ddlsim's own price of every GEMM row of validation/kernels/ (the
POINTS file that `DDLSIM_KERNEL_POINTS=POINTS build/tests/test-kernels`
writes), replicates models/cost_roofline.c's GEMM price for each row at its
preset's fields (gpus/<preset>.json), checks the replica against ddlsim's
price (stops if a row differs by more than 1e-6 relative), and prints:

  1. the residual time (measured - the wave model's compute time, no kernel
     latency) by waves and per-tile reduction length k', for the kernel-only
     H100 table (XLA, CUPTI), the H200 grid (calib, in-stream) bf16 NN and fp8;
  2. mechanisms fitted on stated rows only, each held against the rest:
     a fixed time per kernel c0 (in place of kernel_launch_us) with a fixed
     time per wave cw; and a time cw per wave after the first (1-wave kernels
     unchanged); median signed and |err| per set and per test-kernels class;
  3. the error on the shapes of a hidden-4096 layer (the validation rows that
     read most optimistic): m, n >= 4096, k in {4096, 16384}, n <= 16384;
  4. a public fp8 GEMM-by-shape table on a Hopper part, kernel-only
     (DEEPGEMM below), priced on h100-sxm5-80gb, today and with a fully
     serial epilogue (each output tile written at mem_max of HBM after its
     mainloop, no overlap), the mechanism its short-k rows suggest;
  5. the serial epilogue on the test-kernels classes;
  6. the H100 table (CUPTI, kernel only) against the H200 grid (CUDA events
     around each call, back to back) at the shapes both hold;
  7. large outputs with a short reduction (m n >= 4096^2, k <= 2048) on the
     H200 grid, today and with the serial epilogue.

It fits nothing into ddlsim and writes nothing; the analysis behind
validation/kernels/GEMM.md.

usage: gemm_shape.py REPO POINTS
"""
import csv
import json
import math
import os
import statistics as st
import sys

BYTES = {"bf16": 2, "fp16": 2, "tf32": 4, "fp8": 1}
H100, H200 = "h100-sxm5-80gb", "h200-sxm5-141gb"

# deepseek-ai/DeepGEMM README.md at a6d97a1c1b48a7a9d7994d0e155ee6f11d0a3f07
# (2025-02-25, "Initial commit"), "Normal GEMMs for dense models": M, N, K
# and DeepGEMM's FP8 (e4m3, 1x128 / 128x128 block scaling, bf16 output)
# TFLOP/s on an H800 (132 SMs, H100 SXM5's tensor cores and HBM3), NVCC 12.8;
# tests/test_core.py and deep_gemm/utils.py bench_kineto at that commit:
# torch.profiler (CUPTI) time of the 'fp8_gemm' kernel, 30 calls, no L2
# flush. Time = 2 M N K / TFLOP/s. Hand-copied; MIT licence.
DEEPGEMM = [(64, 2112, 7168, 206), (64, 24576, 1536, 289), (64, 32768, 512, 219),
            (64, 7168, 16384, 336), (64, 4096, 7168, 287), (64, 7168, 2048, 295),
            (128, 2112, 7168, 352), (128, 24576, 1536, 535), (128, 32768, 512, 358),
            (128, 7168, 16384, 645), (128, 4096, 7168, 533), (128, 7168, 2048, 510),
            (4096, 2112, 7168, 1058), (4096, 24576, 1536, 990), (4096, 32768, 512, 590),
            (4096, 7168, 16384, 1358), (4096, 4096, 7168, 1304), (4096, 7168, 2048, 1025)]


def preset(repo, name):
    with open(os.path.join(repo, "gpus", name + ".json")) as f:
        j = json.load(f)
    e, p = j["efficiency"], j["peak_tflops"]
    return dict(sms=j["sm_count"], peak={d: p.get(d, p.get("fp32", 0)) * 1e12 for d in BYTES},
                bw=j["hbm_bw_GBps"] * 1e9, emax=e["gemm_max"],
                emax8=e.get("gemm_max_fp8", e["gemm_max"]), mem=e["mem_max"],
                tile=tuple(e["gemm_tile"]), launch=e["kernel_launch_us"] * 1e-6)


def price(g, r, c0=None, cw=0.0, after_first=False, serial_epilogue=False, escale=1.0):
    """Seconds of one GEMM row (cost_roofline_time_isolated) and its waves."""
    dt, b, m, n, k = r["dt"], r["b"], r["m"], r["n"], r["k"]
    emax = (g["emax8"] if dt == "fp8" else g["emax"]) * escale
    tm, tn = g["tile"]
    sms = g["sms"]
    tiles, kk = math.ceil(m / tm) * math.ceil(n / tn) * b, k
    split = min(math.floor(sms / tiles), math.floor(k / 512))
    if split > 1:
        tiles, kk = tiles * split, k / split
    waves = math.ceil(tiles / sms)
    q = b * m * n * k / (waves * sms * tm * tn * kk)
    comp = 2 * b * m * n * k / (g["peak"][dt] * emax) / min(q, 1)
    comp += cw * (waves - 1 if after_first else waves)
    bo = 2 if dt == "fp8" else BYTES[dt]
    if serial_epilogue:
        comp += tiles * tm * tn * bo / (g["bw"] * g["mem"])
    mem = b * ((m * k + k * n) * BYTES[dt] + m * n * bo) / (g["bw"] * g["mem"])
    return max(comp, mem) + (g["launch"] if c0 is None else c0), waves, kk


def load(points):
    rows, cache = [], {}
    with open(points) as f:
        for p in csv.DictReader(f):
            if not p["class"].startswith("gemm") or p["gpu"] not in (H100, H200):
                continue
            fn, line = p["where"].rsplit(":", 1)
            if fn not in cache:
                with open(fn) as g:
                    cache[fn] = list(csv.DictReader(g))
            r = cache[fn][int(line) - 2]
            rows.append(dict(file=os.path.basename(fn), gpu=p["gpu"], cls=p["class"],
                             dt=p["dtype"], trans=r.get("trans") or "NN",
                             b=int(r["batch"]), m=int(r["m"]), n=int(r["n"]), k=int(r["k"]),
                             t=float(p["measured_s"]), ddl=float(p["ddlsim_isolated_s"])))
    return rows


SETS = [
    ("A xla bf16 b=1 (H100, CUPTI)", lambda r: r["file"] == "xla-h100-gemm.csv" and r["b"] == 1),
    ("B xla bf16 b>1", lambda r: r["file"] == "xla-h100-gemm.csv" and r["b"] > 1),
    ("C xla tf32", lambda r: r["file"] == "xla-h100-tf32-gemm.csv"),
    ("D calib bf16 NN (H200, in-stream)", lambda r: r["file"] == "calib-h200-gemm.csv" and
     r["dt"] == "bf16" and r["trans"] == "NN"),
    ("E calib fp16 all, bf16 NT/TN", lambda r: r["file"] == "calib-h200-gemm.csv" and
     r["dt"] in ("bf16", "fp16") and not (r["dt"] == "bf16" and r["trans"] == "NN")),
    ("F calib tf32", lambda r: r["file"] == "calib-h200-gemm.csv" and r["dt"] == "tf32"),
    ("G calib fp8 (cublasLt TN)", lambda r: r["file"] == "calib-h200-gemm.csv" and r["dt"] == "fp8"),
    ("H in-step bf16 (H200)", lambda r: r["file"] == "insitu-h200-gemm.csv"),
]


def err(gpus, sel, **kw):
    return [price(gpus[r["gpu"]], r, **kw)[0] / r["t"] - 1 for r in sel]


def fmt(e):
    return "n %4d  %+6.1f / %5.1f %%" % (len(e), 100 * st.median(e), 100 * st.median(abs(x) for x in e))


def residuals(rows, gpus):
    print("\n1. measured - wave-model compute (no latency), median us, by waves x k' (n)")
    for name, sel in (SETS[0], SETS[3], SETS[6]):
        cells = {}
        for r in rows:
            if sel(r):
                p, w, kk = price(gpus[r["gpu"]], r, c0=0)
                kb = "<=1k" if kk <= 1024 else "2k" if kk <= 2048 else "4k" if kk <= 4096 else ">=8k"
                wb = "1" if w == 1 else "2-4" if w <= 4 else "5-8" if w <= 8 else ">8"
                cells.setdefault((wb, kb), []).append((r["t"] - p) * 1e6)
        print("  " + name)
        for wb in ("1", "2-4", "5-8", ">8"):
            line = ["%6.1f (%3d)" % (st.median(cells[(wb, kb)]), len(cells[(wb, kb)]))
                    if (wb, kb) in cells else "%12s" % "-" for kb in ("<=1k", "2k", "4k", ">=8k")]
            print("    waves %-4s k' <=1k, 2k, 4k, >=8k: %s" % (wb, "  ".join(line)))


def fit(rows, gpus, sel, after_first):
    best = None
    c0s = [None] if after_first else [x * 0.25e-6 for x in range(25)]
    for c0 in c0s:
        for cw in (x * 0.25e-6 for x in range(17)):
            e = err(gpus, sel, c0=c0, cw=cw, after_first=after_first)
            v = st.mean(abs(math.log(1 + x)) for x in e)
            if best is None or v < best[0]:
                best = (v, c0, cw)
    return best[1], best[2]


def mechanisms(rows, gpus):
    print("\n2. mechanisms fitted on one set (mean |log ratio|), held against the rest:"
          " median signed / |err|")
    for after_first in (False, True):
        for fname, fsel in (SETS[0], SETS[3]):
            fitrows = [r for r in rows if fsel(r)]
            c0, cw = fit(rows, gpus, fitrows, after_first)
            what = ("cw per wave after the first, latency kept" if after_first else
                    "c0 per kernel + cw per wave")
            print("  %s, fitted on %s: c0 %s, cw %.2f us" % (
                what, fname.split(" (")[0], "preset" if c0 is None else "%.2f us" % (c0 * 1e6),
                cw * 1e6))
            for name, sel in SETS:
                s = [r for r in rows if sel(r)]
                print("    %-36s today %s  ->  %s" % (name, fmt(err(gpus, s)),
                                                      fmt(err(gpus, s, c0=c0, cw=cw,
                                                              after_first=after_first))))
            classes = sorted({(r["cls"], r["gpu"]) for r in rows})
            out = []
            for c, g in classes:
                s = [r for r in rows if r["cls"] == c and r["gpu"] == g]
                a = st.median(abs(x) for x in err(gpus, s))
                b = st.median(abs(x) for x in err(gpus, s, c0=c0, cw=cw, after_first=after_first))
                out.append("%s %s %.1f->%.1f" % (c, g.split("-")[0], 100 * a, 100 * b))
            print("    classes |err|: " + ", ".join(out))


def ceiling_fit(rows, gpus):
    print("\n2b. a ceiling of its own (gemm_max x s) with a per-wave cost, 4 us kept, fitted on A")
    fitrows = [r for r in rows if SETS[0][1](r)]
    best = None
    for i in range(15):
        for j in range(13):
            e = err(gpus, fitrows, escale=(0.78 + 0.01 * i) / 0.803, cw=j * 0.25e-6)
            v = st.mean(abs(math.log(1 + x)) for x in e)
            if best is None or v < best[0]:
                best = (v, 0.78 + 0.01 * i, j * 0.25e-6)
    _, ceil, cw = best
    print("  ceiling %.2f (fp8 scaled alike), cw %.2f us" % (ceil, cw * 1e6))
    for name, sel in SETS:
        s = [r for r in rows if sel(r)]
        print("    %-36s today %s  ->  %s" % (name, fmt(err(gpus, s)),
                                              fmt(err(gpus, s, escale=ceil / 0.803, cw=cw))))


def hidden4096(rows, gpus):
    print("\n3. shapes of a hidden-4096 layer (m, n >= 4096, k 4096 or 16384, n <= 16384)")
    for dt in ("fp8", "bf16"):
        s = [r for r in rows if r["file"] == "calib-h200-gemm.csv" and r["dt"] == dt and
             min(r["m"], r["n"]) >= 4096 and r["k"] in (4096, 16384) and max(r["m"], r["n"]) <= 16384]
        print("  calib %-4s today %s   cw 1.5 us after the first wave %s" % (
            dt, fmt(err(gpus, s)), fmt(err(gpus, s, cw=1.5e-6, after_first=True))))
    s = [r for r in rows if SETS[7][1](r) and r["n"] <= 16384 and r["m"] <= 16384]
    print("  in-step bf16 (llama7b-like) today %s   cw 1.5 us after the first wave %s" % (
        fmt(err(gpus, s)), fmt(err(gpus, s, cw=1.5e-6, after_first=True))))


def deepgemm(gpus):
    print("\n4. DeepGEMM fp8 on H800 (kernel-only), priced on %s: err today | serial epilogue" % H100)
    g = gpus[H100]
    for m, n, k, tf in DEEPGEMM:
        r = dict(dt="fp8", b=1, m=m, n=n, k=k)
        t = 2 * m * n * k / (tf * 1e12)
        p, w, kk = price(g, r)
        pe = price(g, r, serial_epilogue=True)[0]
        print("  %5d %6d %6d  %7.1f us  waves %2d  k' %5d  %+6.1f %%  | %+6.1f %%" % (
            m, n, k, t * 1e6, w, kk, 100 * (p / t - 1), 100 * (pe / t - 1)))


def common_shapes(rows):
    print("\n6. H200 grid time / H100 XLA time, bf16 NN b = 1, shapes in both")
    x = {(r["m"], r["n"], r["k"]): r["t"] for r in rows if SETS[0][1](r)}
    c = {}
    for r in rows:
        if SETS[3][1](r):
            c.setdefault((r["m"], r["n"], r["k"]), r["t"])
    both = sorted(set(x) & set(c))
    ratio = [c[s] / x[s] for s in both]
    print("  n %d  median %.3f  range %.3f..%.3f" % (len(both), st.median(ratio), min(ratio), max(ratio)))
    for s in both:
        if s[0] * s[1] >= 4096 * 4096:
            print("  %5d %5d %5d  H100 %6.1f us  H200 %6.1f us" % (s + (x[s] * 1e6, c[s] * 1e6)))


def short_k(rows, gpus):
    print("\n7. H200 grid, m n >= 4096^2 and k <= 2048: today -> serial epilogue")
    for dt in ("fp8", "bf16"):
        s = [r for r in rows if r["file"] == "calib-h200-gemm.csv" and r["dt"] == dt and
             r["m"] * r["n"] >= 4096 * 4096 and r["k"] <= 2048]
        print("  %-4s today %s  ->  %s" % (dt, fmt(err(gpus, s)), fmt(err(gpus, s, serial_epilogue=True))))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    repo, points = sys.argv[1], sys.argv[2]
    rows = load(points)
    gpus = {g: preset(repo, g) for g in (H100, H200)}
    for r in rows:
        mine = price(gpus[r["gpu"]], r)[0]
        if abs(mine / r["ddl"] - 1) > 1e-6:
            sys.exit("%s %s: replica %.6g s, ddlsim %.6g s" % (r["file"], r, mine, r["ddl"]))
    print("replica = ddlsim's price on all %d H100/H200 GEMM rows" % len(rows))
    residuals(rows, gpus)
    mechanisms(rows, gpus)
    ceiling_fit(rows, gpus)
    hidden4096(rows, gpus)
    deepgemm(gpus)
    print("\n5. the serial epilogue on the ddlsim GEMM classes (median signed / |err|)")
    for c, gpu in sorted({(r["cls"], r["gpu"]) for r in rows}):
        s = [r for r in rows if r["cls"] == c and r["gpu"] == gpu]
        print("  %-14s %-16s today %s  ->  %s" % (c, gpu, fmt(err(gpus, s)),
                                                 fmt(err(gpus, s, serial_epilogue=True))))
    common_shapes(rows)
    short_k(rows, gpus)


if __name__ == "__main__":
    main()

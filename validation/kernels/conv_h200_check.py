#!/usr/bin/env python3
"""conv_h200_check.py: ddlsim's convolution price against cuDNN on an H200.

Reads the conv section of calib/profiles/h200-sxm5-141gb.csv (cuDNN 9.19,
fp16 NHWC, the fastest algorithm cudnnFind returned, back-to-back timings
on the power-capped H200 of 2026-11-26; calib/profiles/README.md) and
prices every ResNet-50 bottleneck convolution at batch 128 (fwd, dgrad,
wgrad; the 7x7 stem left out) with a replica of models/cost_roofline.c
for an OP_CONV as models/cnn.c builds it: waves of 128 x 256 tiles on 132
SMs at gemm_max of the fp16 peak, split-K below one wave, max(compute,
bytes at mem_max of HBM) + the kernel latency. Prints measured / priced
per class (1x1 and 3x3, by pass), ResNet-50's layers with their
multiplicity, at the preset's mem_max and at any other given as argv[1].

Before printing, the replica is checked against ddlsim's own price of the
convolutions of one H200 ResNet step (argv[2], a report.json written by
`ddlsim run validation/resnet50-mlperf/resnet50-h200-8gpu.json --format
json -o DIR`): it stops if any op differs by more than 1e-6 relative.
The wgrad of 128 -> 512 channels at 28 x 28, 353 us measured against
39 us priced (37 TFLOP/s), is left out as a cudnnFind outlier: the same
layer's wgrad runs at 221 and 270 TFLOP/s at batch 32 and 64, and every
other batch-128 wgrad is within 1.5x of its price. Analysis behind validation/README.md 'ResNet-50 on Hopper, second
pass'; nothing is written back.
"""
import collections
import csv
import json
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PRESET = json.load(open(os.path.join(ROOT, "gpus", "h200-sxm5-141gb.json")))
PEAK = PRESET["peak_tflops"]["fp16"] * 1e12
GMAX = PRESET["efficiency"]["gemm_max"]
BW = PRESET["hbm_bw_GBps"] * 1e9
SMS = PRESET["sm_count"]
TM, TN = PRESET["efficiency"]["gemm_tile"]
LAT = PRESET["efficiency"]["kernel_launch_us"] * 1e-6


def gemm_time(m, n, k, flops):
    tiles = math.ceil(m / TM) * math.ceil(n / TN)
    kk = k
    split = min(math.floor(SMS / tiles), math.floor(k / 512))
    if split > 1:
        tiles *= split
        kk = k / split
    waves = math.ceil(tiles / SMS)
    q = m * n * k / (waves * SMS * TM * TN * kk)
    return flops / (PEAK * GMAX) / min(q, 1)


def price_mnk(m, n, k, flops, nbytes, mem):
    return max(gemm_time(m, n, k, flops), nbytes / (BW * mem)) + LAT


def price(N, C, H, K, R, s, pas, mem):
    pad = (R - 1) // 2
    P = math.floor((H + 2 * pad - R) / s) + 1
    flops = 2 * N * P * P * K * C * R * R
    nbytes = (N * C * H * H + K * C * R * R + N * K * P * P) * 2
    if pas == "fwd":
        m, n, k = N * P * P, K, C * R * R
    elif pas == "bwd_data":
        m, n, k = N * H * H, C, K * R * R
    else:
        m, n, k = K, C * R * R, N * P * P
    return price_mnk(m, n, k, flops, nbytes, mem)


def check_replica(report):
    ops = json.load(open(report))["cost_model"]["ops_per_microbatch"]
    mem = PRESET["efficiency"]["mem_max"]
    n = 0
    for o in ops:
        if not o["op"].startswith("conv"):
            continue
        t = price_mnk(o["m"], o["n"], o["k"], o["flops"], o["bytes"], mem)
        if abs(t / o["time_s"] - 1) > 1e-6:
            sys.exit("replica differs from ddlsim on %s %s: %g against %g s"
                     % (o["block"], o["op"], t, o["time_s"]))
        n += 1
    print("replica = ddlsim's price on all %d convolutions of %s" % (n, report))


def resnet50_layers():
    out, c, h = [], 64, 56
    for st, (w, nb) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for b in range(nb):
            s = 2 if st > 0 and b == 0 else 1
            out += [(c, h, w, 1, 1), (w, h, w, 3, s), (w, h // s, 4 * w, 1, 1)]
            if b == 0:
                out.append((c, h, 4 * w, 1, s))
            c, h = 4 * w, h // s
    return out


def main():
    mem = float(sys.argv[1]) if len(sys.argv) > 1 else PRESET["efficiency"]["mem_max"]
    if len(sys.argv) > 2:
        check_replica(sys.argv[2])
    meas = {}
    path = os.path.join(ROOT, "calib", "profiles", "h200-sxm5-141gb.csv")
    for r in csv.DictReader(open(path)):
        if r["section"] == "conv" and int(r["b"]) == 128:
            key = tuple(int(r[x]) for x in ("c", "h", "k", "r", "stride")) + (r["pass"],)
            meas[key] = float(r["time_s"])
    cls = collections.defaultdict(lambda: [0.0, 0.0])
    for (C, H, K, R, s) in resnet50_layers():
        for pas in ("fwd", "bwd_data", "bwd_filter"):
            m = meas[(C, H, K, R, s, pas)]
            p = price(128, C, H, K, R, s, pas, mem)
            if (C, H, K, R, s, pas) == (128, 28, 512, 1, 1, "bwd_filter"):
                continue
            c = cls["%dx%d %s" % (R, R, pas)]
            c[0] += m
            c[1] += p
    tm = sum(v[0] for v in cls.values())
    tp = sum(v[1] for v in cls.values())
    print("mem_max %.3f; ResNet-50 bottleneck convolutions, batch 128, H200" % mem)
    for k, v in sorted(cls.items()):
        print("  %-14s measured %6.0f us  priced %6.0f us  measured/priced %.3f"
              % (k, v[0] * 1e6, v[1] * 1e6, v[0] / v[1]))
    print("  %-14s measured %6.0f us  priced %6.0f us  measured/priced %.3f"
          % ("all", tm * 1e6, tp * 1e6, tm / tp))


if __name__ == "__main__":
    main()

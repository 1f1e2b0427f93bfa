#!/usr/bin/env python3
"""Write the per-kernel files of validation/kernels/ that come from the
project's own H200 measurements (calib/profiles/, 2026-11-26).

Every number is copied from the committed profile files or converted by
exact arithmetic (seconds to microseconds); README.md says what each file
holds, how it was measured and what was dropped and why. Deterministic:
the same inputs give the same bytes.

usage: extract_calib.py SRCDIR OUTDIR
  SRCDIR: the source root (reads calib/profiles/h200-sxm5-141gb.csv and
  calib/profiles/h200-2026-11-26/insitu-llama{7b,70b}-layers.json).
Writes calib-h200-gemm.csv, calib-h200-membound.csv,
calib-h200-attention.csv, insitu-h200-gemm.csv, insitu-h200-attention.csv.
"""
import csv
import json
import re
import sys

GPU = "h200-sxm5-141gb"
PROFILE = "calib/profiles/h200-sxm5-141gb.csv"
INSITU = ["calib/profiles/h200-2026-11-26/insitu-llama7b-layers.json",
          "calib/profiles/h200-2026-11-26/insitu-llama70b-layers.json"]
CALIB_COND = "back_to_back"  # a micro-benchmark, sections back to back (clocks per section: README.md)
IN_STEP = "in_step"      # inside a steady training step (torch.profiler device time)

# calib dtype -> ddlsim dtype; fp32 (SIMT sgemm) is dropped (README.md)
GEMM_DTYPES = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32", "fp8_e4m3": "fp8"}
EW_COLS = 4096       # calib/bench_mem.c: element-wise kernels work on rows of 4096
BYTES_TOL = 0.02     # keep a memory-bound point when calib's bytes are within 2 % of the suite op's


def fmt(x, nd=4):
    s = f"{x:.{nd}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def us(time_s):
    return fmt(float(time_s) * 1e6, 4)


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return len(rows)


def profile_rows(src):
    with open(f"{src}/{PROFILE}", newline="") as f:
        return list(csv.DictReader(f))


def gemm(points, out):
    """cuBLAS's column-major C[M,N] = op(A)[M,K] op(B)[K,N] is the product
    C[m,n] = A[m,k] B[k,n] with m, n, k = M, N, K (the layout is storage
    only); calib/shapes.c's layer shapes are ddlsim's own (m, n, k) per
    pass (models/workload.c gemm_ex). The transposes go to 'trans'."""
    rows = []
    for p in points:
        if p["section"] != "gemm" or p["dtype"] not in GEMM_DTYPES:
            continue
        rows.append([GPU, GEMM_DTYPES[p["dtype"]], 1, int(p["m"]), int(p["n"]), int(p["k"]),
                     us(p["time_s"]), p["tflops"], p["pass"], p["impl"], CALIB_COND])
    rows.sort(key=lambda r: (r[1], r[3], r[4], r[5], r[8]))
    return write(f"{out}/calib-h200-gemm.csv",
                 ["gpu", "dtype", "batch", "m", "n", "k", "time_us", "tflops", "trans", "impl",
                  "condition"], rows)


def row_threads(row):
    """kernels/kernels-private.cuh row_threads(): the CTA of the project's
    row-wise kernels, about eight elements per thread, 32..512."""
    t = (row // 8 + 31) // 32 * 32
    return min(max(t, 32), 512)


def suite_bytes(kind, dt_bytes, rows, row):
    """HBM bytes (first read + write, without re-reads) of the op the suite
    builds for kind (tests/test-kernels.c kernel_membound_op)."""
    n = rows * row
    return {"gelu": 2, "swiglu": 3, "layernorm": 2, "rmsnorm": 2, "softmax": 2}[kind] * dt_bytes * n


# calib kernel -> (suite kernel, pass), where the passes are the same:
#   bias_gelu    one kernel, read x (+ the bias row), write y: the suite's gelu
#   bias_swiglu  read x[rows, 2 row] (+ bias), write y[rows, row]: 3 touches
#                per output element, ddlsim's bias_swiglu piece (models/stack.c)
#   layernorm_fwd, rmsnorm_fwd  one CTA per row: a statistics sweep, a second
#                sweep that re-reads the row (L1/L2) and writes y (+ fp32
#                stats): rowwise.h's layer-norm passes, at the kernel's CTA
#   softmax_fwd  three sweeps (max, sum, write): rowwise.h's block softmax
#                (rows > 1024; shorter rows the suite prices as PyTorch's
#                one-read warp kernel, which this kernel is not)
# The row-wise kernels (layernorm_fwd, rmsnorm_fwd, softmax_fwd) load one
# element per thread per iteration (kernels/layernorm.cu, softmax.cu: no
# vector loads), unlike the kernels frameworks run (PyTorch's, vectorised):
# their rows carry kernel_impl "scalar" and fall in classes of their own
# (layernorm_scalar, ...; validation/kernels/README.md). bias_gelu and
# bias_swiglu load 4-vectors (kernels/elementwise.cu *_vec): blank.
# Dropped: layernorm_bwd (computes dgamma/dbeta: per-block fp32 partials and
# a second kernel, which the suite's layer-norm backward leaves out);
# softmax_bwd (one kernel, 3 touches; the suite's is PyTorch's two kernels,
# 6 touches).
MEM_MAP = {"bias_gelu": "gelu", "bias_swiglu": "swiglu", "layernorm_fwd": "layernorm",
           "rmsnorm_fwd": "rmsnorm", "softmax_fwd": "softmax"}
DT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def membound(points, out):
    rows, dropped = [], {}
    for p in points:
        if p["section"] != "memory_bound":
            continue
        k, row, el = p["impl"], int(p["row"]), int(p["elements"])
        kind = MEM_MAP.get(k)
        why = None
        if kind is None:
            why = "no faithful suite kind"
        elif kind == "softmax" and row <= 1024:
            why = "softmax row <= 1024"
        r = row if row > 0 else EW_COLS
        assert el % r == 0, (k, el, r)
        nrows = el // r
        if why is None:
            sb = suite_bytes(kind, DT_BYTES[p["dtype"]], nrows, r)
            if abs(int(p["bytes"]) / sb - 1) > BYTES_TOL:
                why = "bytes differ > 2 %"
        if why:
            dropped[(k, why)] = dropped.get((k, why), 0) + 1
            continue
        rowwise = kind in ("layernorm", "rmsnorm", "softmax")
        rt = row_threads(r) if rowwise else ""
        rows.append([GPU, kind, "fwd", p["dtype"], nrows, r, us(p["time_s"]), rt, k,
                     int(p["bytes"]), CALIB_COND, "scalar" if rowwise else ""])
    rows.sort(key=lambda x: (x[1], x[3], x[5], x[4]))
    for (k, why), n in sorted(dropped.items()):
        print(f"  membound dropped {n:4d} {k}: {why}", file=sys.stderr)
    return write(f"{out}/calib-h200-membound.csv",
                 ["gpu", "kernel", "pass", "dtype", "rows", "row_len", "time_us", "row_threads",
                  "calib_kernel", "calib_bytes", "condition", "kernel_impl"], rows)


def attention(points, out):
    rows = []
    for p in points:
        if p["section"] != "attention" or p["impl"] != "cudnn_sdpa":
            continue
        assert p["m"] == p["n"]
        h = int(p["c"])
        rows.append([GPU, "cudnn", p["pass"], p["dtype"], int(p["b"]), h, h, int(p["m"]),
                     int(p["k"]), 1, us(p["time_s"]), p["tflops"], CALIB_COND,
                     f"{PROFILE} cudnn_sdpa"])
    rows.sort(key=lambda r: (r[2], r[7], r[5]))
    return write(f"{out}/calib-h200-attention.csv",
                 ["gpu", "backend", "pass", "dtype", "batch", "heads", "kv_heads", "seq",
                  "head_dim", "causal", "time_us", "tflops", "condition", "source"], rows)


def layer_gemms(h, ffn, t):
    """The aten::mm input shapes of calib/insitu_probe.py's Layer: nn.Linear
    (in -> out) runs forward X[t,in] W^T[in,out], dgrad dY[t,out] W[out,in],
    wgrad dY^T[out,t] X[t,in]. Returns {((M,K),(K,N)): [names]}."""
    lin = [("qkv", h, 3 * h), ("o", h, h), ("gate_up", h, 2 * ffn), ("down", ffn, h)]
    m = {}
    for name, i, o in lin:
        for role, key in (("fwd", ((t, i), (i, o))), ("dgrad", ((t, o), (o, i))),
                          ("wgrad", ((o, t), (t, i)))):
            m.setdefault(key, []).append(f"{name}.{role}")
    return m


def insitu(src, out):
    grows, arows = [], []
    for path in INSITU:
        with open(f"{src}/{path}") as f:
            d = json.load(f)
        st = d["step"]
        model = re.search(r"insitu-(\w+)-layers", path).group(1)
        roles = layer_gemms(st["hidden"], st["ffn"], st["seq"])
        for op in st["ops"]:
            name, _, shp = op["op"].partition("[")
            shapes = json.loads("[" + shp)
            t_us = fmt(op["in_step_us"], 3)
            calls = fmt(op["calls_per_step"], 3)
            if name == "aten::mm":
                (M, K), (K2, N) = shapes
                assert K == K2
                r = roles[((M, K), (K2, N))]
                # every role of the shape runs once per layer
                assert op["calls_per_step"] == len(r) * st["layers"], (op, r)
                grows.append([GPU, "bf16", 1, M, N, K, t_us, calls, "+".join(r), model, IN_STEP])
            elif name.startswith("aten::_scaled_dot_product_cudnn_attention"):
                b, heads, s, dh = shapes[0]
                ps = "bwd" if name.endswith("_backward") else "fwd"
                arows.append([GPU, "cudnn", ps, "bf16", b, heads, heads, s, dh, 1, t_us, "", calls,
                              model, IN_STEP, f"{path} {name}"])
    grows.sort(key=lambda r: (r[9], r[3], r[4], r[5]))
    arows.sort(key=lambda r: (r[13], r[2]))
    ng = write(f"{out}/insitu-h200-gemm.csv",
               ["gpu", "dtype", "batch", "m", "n", "k", "time_us", "calls_per_step",
                "layer_gemms", "model", "condition"], grows)
    na = write(f"{out}/insitu-h200-attention.csv",
               ["gpu", "backend", "pass", "dtype", "batch", "heads", "kv_heads", "seq",
                "head_dim", "causal", "time_us", "tflops", "calls_per_step", "model",
                "condition", "source"], arows)
    return ng, na


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    pts = profile_rows(src)
    print("calib-h200-gemm.csv", gemm(pts, out))
    print("calib-h200-membound.csv", membound(pts, out))
    print("calib-h200-attention.csv", attention(pts, out))
    print("insitu-h200-gemm.csv, insitu-h200-attention.csv", *insitu(src, out))


if __name__ == "__main__":
    main()

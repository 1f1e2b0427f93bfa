#!/usr/bin/env python3
"""Trim a real PyTorch profiler (Kineto) trace to the subtrees of the ops
calib-trace reads, in the ProfilerSteps asked for.

usage: trim.py IN.json.gz OUT.json.gz FIRST_STEP LAST_STEP [--nccl N]

Kept: the top-level keys but traceEvents; the ProfilerStep#N annotations
FIRST..LAST; every cpu_op of interest whose start lies in one of them, with
every cpu_op nested in it on its thread; the runtime launches on that thread
inside its span, and the kernels of their correlations. --nccl N also keeps
the first N NCCL kernels in those steps, with their launches and the cpu_ops
around the launches. Nothing is altered: the events kept are the original
objects, so kineto's attribution of the kept ops is unchanged (an op's
kernels are those launched inside its own span).
"""
import gzip, json, sys

OPS = {
    "aten::mm", "aten::addmm", "aten::_scaled_mm", "aten::bmm", "aten::baddbmm",
    "aten::matmul", "aten::linear", "aten::native_layer_norm", "aten::_softmax",
    "aten::_softmax_backward_data", "aten::native_layer_norm_backward",
    "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
    "aten::_fused_rms_norm", "aten::rms_norm", "aten::gelu", "aten::gelu_backward", "aten::add",
}


def main():
    src, dst, lo, hi = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    nccl = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--nccl" else 0
    d = json.load(gzip.open(src) if src.endswith(".gz") else open(src))
    ev = d["traceEvents"]
    steps = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator")
             and e["name"].startswith("ProfilerStep#") and lo <= int(e["name"][13:]) <= hi]
    def in_step(e):
        return any(s["pid"] == e["pid"] and s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps)
    cpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator")]
    rt = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime", "Driver")]
    roots = [e for e in cpu if e["name"] in OPS and in_step(e)]
    keep = set()
    spans = []
    for r in roots:
        spans.append((r["pid"], r["tid"], r["ts"], r["ts"] + r["dur"]))
    def inside(e):
        return any(p == e["pid"] and t == e["tid"] and a <= e["ts"] and e["ts"] + e.get("dur", 0) <= b
                   for p, t, a, b in spans)
    corr = set()
    kern = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel")]
    if nccl:
        nk = [k for k in kern if k["name"].startswith("ncclKernel") or k["name"].startswith("ncclDevKernel")]
        nk = [k for k in nk if any(s["ts"] <= k["ts"] < s["ts"] + s["dur"] for s in steps)][:nccl]
        want = {k["args"]["correlation"] for k in nk}
        for r in rt:
            if r["args"].get("correlation") in want:
                keep.add(id(r)); corr.add(r["args"]["correlation"])
                for c in cpu:
                    if c["pid"] == r["pid"] and c["tid"] == r["tid"] and c["ts"] <= r["ts"] < c["ts"] + c["dur"]:
                        keep.add(id(c))
    for e in cpu:
        if inside(e):
            keep.add(id(e))
    for r in rt:
        if inside(r):
            keep.add(id(r)); corr.add(r["args"].get("correlation"))
    out = []
    for e in ev:
        if id(e) in keep or any(e is s for s in steps):
            out.append(e)
        elif e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel") and e["args"].get("correlation") in corr:
            out.append(e)
    d["traceEvents"] = out
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(d, f, separators=(",", ":"))


main()

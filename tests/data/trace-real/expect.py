#!/usr/bin/env python3
"""Expected calib-trace entries of a real trace, worked independently of
models/kineto.c: for every GEMM / layer-norm op call in the steps after the
first, the kernels launched inside its span on its thread and not inside a
nested op of interest (found by time, not by External id), summed; grouped
by op, dtype and shape; the median of each group, in microseconds.

usage: expect.py TRACE.json.gz FIRST_STEP LAST_STEP [--tf32-names]
"""
import gzip, json, statistics, sys

GEMM = {"aten::mm": 0, "aten::addmm": 1, "aten::bmm": 0, "aten::baddbmm": 1, "aten::linear": 0,
        "aten::matmul": 0}
NORM = {"aten::native_layer_norm"}
EW = {"aten::add", "aten::gelu", "aten::gelu_backward"}
ALL = set(GEMM) | NORM | EW | {"aten::_softmax", "aten::_softmax_backward_data",
                               "aten::native_layer_norm_backward", "aten::rms_norm"}
SIZE = {"float": 4, "c10::Half": 2, "c10::BFloat16": 2}


def main():
    src, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ev = json.load(gzip.open(src))["traceEvents"]
    steps = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "Operator")
                    and e["name"].startswith("ProfilerStep#") and lo <= int(e["name"][13:]) <= hi),
                   key=lambda e: int(e["name"][13:]))
    timed = steps[1:] if len(steps) > 1 else steps
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator") and e["name"] in ALL
           and any(s["pid"] == e["pid"] and s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in timed)]
    rts = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime", "Driver")]
    kern = {}
    for k in ev:
        if k.get("ph") == "X" and k.get("cat") in ("kernel", "Kernel"):
            kern.setdefault(k["args"].get("correlation"), []).append(k)
    order = {id(e): i for i, e in enumerate(ev)}
    by_thread = {}
    for o in ops:
        by_thread.setdefault((o["pid"], o["tid"]), []).append(o)
    groups = {}
    for o in ops:
        a, b = o["ts"], o["ts"] + o["dur"]
        # an op of one span with o is inside it when it comes later (the
        # profiler writes a parent before its children)
        inner = [p for p in by_thread[(o["pid"], o["tid"])] if p is not o and a <= p["ts"] and p["ts"] + p["dur"] <= b
                 and not (p["ts"] == a and p["dur"] == o["dur"] and order[id(p)] < order[id(o)])]
        launches = [r for r in rts if r["pid"] == o["pid"] and r["tid"] == o["tid"] and a <= r["ts"] < b
                    and not any(p["ts"] <= r["ts"] < p["ts"] + p["dur"] for p in inner)]
        ks = [k for r in launches for k in kern.get(r["args"].get("correlation"), [])]
        if not ks:
            continue
        args = o["args"]
        dims, types = args.get("Input Dims"), args.get("Input type")
        if not dims:
            continue
        t = sum(k["dur"] for k in ks)
        tf32 = any("tf32" in k["name"].lower() or "tensorop_s1688gemm" in k["name"] for k in ks)
        if o["name"] in GEMM:
            i = GEMM[o["name"]]
            A, B = dims[i], dims[i + 1]
            if o["name"] == "aten::linear":
                m = 1
                for x in A[:-1]:
                    m *= x
                shape = ("gemm", m, B[0], A[-1])
            elif len(A) == 3 and len(B) == 3:
                shape = ("gemm", A[0] * A[1], B[2], A[2])
            elif o["name"] == "aten::matmul" and len(A) >= 3 and len(B) == 2:
                m = 1
                for x in A[:-1]:
                    m *= x
                shape = ("gemm", m, B[1], A[-1])
            elif len(A) == 2 and len(B) == 2:
                shape = ("gemm", A[0], B[1], A[1])
            else:
                continue
            dt = types[i]
            dt = "tf32" if dt == "float" and tf32 else "fp32" if dt == "float" else dt
        elif o["name"] in NORM:
            n = 1
            for x in dims[0]:
                n *= x
            row = 1
            for x in dims[2]:
                row *= x
            shape = ("layernorm_fwd", n, row)
            dt = "fp32" if types[0] == "float" else types[0]
        elif o["name"] in EW:
            if types[0] not in SIZE:
                continue
            if o["name"] == "aten::add" and (dims[0] != dims[1] or not dims[0]):
                continue
            n = 1
            for x in dims[0]:
                n *= x
            shape = ({"aten::add": "residual", "aten::gelu": "bias_gelu_fwd",
                      "aten::gelu_backward": "bias_gelu_bwd"}[o["name"]], n, 0)
            dt = "fp32" if types[0] == "float" else types[0]
        else:
            continue
        groups.setdefault((o["name"], dt) + shape, []).append(t)
    for key in sorted(groups, key=str):
        v = groups[key]
        print(" ".join(str(x) for x in key), len(v), "%.3f" % statistics.median(v))


main()

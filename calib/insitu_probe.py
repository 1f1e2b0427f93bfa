#!/usr/bin/env python3
"""calib/insitu_probe.py - kernels inside a training step against the same
kernels alone, and the clock a long GEMM load sustains.

ddlsim prices each op from a micro-benchmark of that op alone (calib, or the
roofline's efficiencies, which come from such benchmarks).  This probe
measures, on one GPU, what that leaves out:

  sustained  back-to-back bf16 GEMMs (8192^3) for SECONDS: TFLOP/s, SM clock,
             power and the clock-event (throttle) reasons each second, read
             through NVML (nvidia-ml-py), so the first seconds (what a
             micro-benchmark sees) can be set against the steady state;
  step       LAYERS Llama-2-7B-shaped decoder layers (h 4096, FFN 11008,
             32 heads of 128, SwiGLU, RMSNorm, causal SDPA; no RoPE), bf16,
             one micro-batch of SEQ tokens, forward + backward + fused AdamW.
             The step's wall time (CUDA events), the share of it the GPU is
             busy (union of kernel intervals from torch.profiler), and for
             every distinct (op, input shapes) the device time inside the
             step against the same op replayed alone on a copy of its real
             arguments (same shapes, strides and data), median of REPS.

Output: one JSON file (schema ddlsim.insitu 1.0) and a short table on
stdout.  It needs PyTorch with CUDA; it changes no GPU setting.
usage: insitu_probe.py OUT.json [--sustained-s 45] [--layers 4] [--seq 4096]
       [--hidden 4096 --ffn 11008 --heads 32] [--warm-s 40] [--idle-s 8]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

try:
    import pynvml
except ImportError:  # the clock columns are then null
    pynvml = None


def nvml_handle():
    if pynvml is None:
        return None
    try:
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception:  # noqa: BLE001 - NVML may be absent in a container
        return None


def nvml_fields(h, fields):
    """{key: fn()} for each (key, fn) of fields; None where NVML refuses,
    bytes decoded; {} without NVML."""
    if h is None:
        return {}
    out = {}
    for key, fn in fields:
        try:
            v = fn()
            out[key] = v.decode() if isinstance(v, bytes) else v
        except Exception:  # noqa: BLE001
            out[key] = None
    return out


def nvml_read(h):
    return nvml_fields(h, (
        ("sm_clock_MHz", lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)),
        ("mem_clock_MHz", lambda: pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)),
        ("power_W", lambda: pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0),
        ("temp_C", lambda: pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)),
        ("clock_event_reasons", lambda: pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(h))))


def nvml_static(h):
    return nvml_fields(h, (
        ("max_sm_clock_MHz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)),
        ("max_mem_clock_MHz", lambda: pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)),
        ("power_limit_W", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
        ("driver", lambda: pynvml.nvmlSystemGetDriverVersion())))


def sustained(seconds, h):
    n = 8192
    a = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    b = torch.rand(n, n, device="cuda", dtype=torch.bfloat16) * 2 - 1
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flop = 2.0 * n ** 3
    for _ in range(3):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    rows, t0 = [], time.time()
    while time.time() - t0 < seconds:
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(40):
            torch.mm(a, b, out=c)
        e.record()
        mid = nvml_read(h)  # read while the batch still runs
        e.synchronize()
        ms = s.elapsed_time(e)
        row = {"t_s": round(time.time() - t0, 3), "tflops": 40 * flop / (ms / 1e3) / 1e12}
        row.update(mid)
        rows.append(row)
    return rows


class RMSNorm(nn.Module):
    """Llama's RMSNorm as HF eager writes it (fp32 inside)."""

    def __init__(self, h):
        super().__init__()
        self.w = nn.Parameter(torch.ones(h))

    def forward(self, x):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
        return self.w * xf.to(x.dtype)


class Layer(nn.Module):
    def __init__(self, h, ffn, heads):
        super().__init__()
        self.h, self.heads = h, heads
        self.n1, self.n2 = RMSNorm(h), RMSNorm(h)
        self.qkv = nn.Linear(h, 3 * h, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.gu = nn.Linear(h, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.n1(x)).view(b, s, 3, self.heads, d).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        g, u = self.gu(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


def shapes_key(name, shapes):
    return name + str([list(s) for s in shapes if s])


def copy_view(a):
    """A copy of tensor A with A's own sizes, strides and offset (clone()
    makes a strided view such as a chunk() contiguous, and a kernel on
    contiguous data can run twice as fast as on the view)."""
    if not isinstance(a, torch.Tensor):
        return a
    a = a.detach()
    if a.numel() == 0:
        return a.clone()
    n = a.storage_offset() + 1 + sum((sz - 1) * st for sz, st in zip(a.shape, a.stride()))
    view = a.new_empty(n).as_strided(a.shape, a.stride(), a.storage_offset())
    view.copy_(a)
    return view


class Capture(TorchDispatchMode):
    """Keeps one copy of the arguments of each distinct (op, shapes)."""

    def __init__(self):
        super().__init__()
        self.ops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        flat = list(args) + list(kwargs.values())
        if any(isinstance(a, (list, tuple)) and any(isinstance(t, torch.Tensor) for t in a) for a in flat):
            return out  # tensor lists (foreach, fused optimizer): not replayed
        shapes = [tuple(a.shape) for a in flat if isinstance(a, torch.Tensor)]
        key = shapes_key(func._schema.name, shapes)
        if key not in self.ops:
            self.ops[key] = (func, [copy_view(a) for a in args],
                             {k: copy_view(v) for k, v in kwargs.items()})
        return out


def time_alone(func, args, kwargs, reps, inner=10):
    """Device time of one call: INNER calls between two events, queued
    while the GPU spins (torch.cuda._sleep) so that no host launch gap
    falls between the events; median over REPS."""
    for _ in range(3):
        func(*args, **kwargs)
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(2_000_000)  # ~1 ms of spinning while the calls queue up
        s.record()
        for _ in range(inner):
            func(*args, **kwargs)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3 / inner)
    return statistics.median(ts)


def busy_union_us(kernels):
    iv = sorted((k.time_range.start, k.time_range.end) for k in kernels)
    busy, cur_s, cur_e = 0.0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        busy += cur_e - cur_s
    return busy, (iv[-1][1] - iv[0][0]) if iv else 0.0


def step_probe(layers, seq, reps, warm_s, idle_s, hdl, h=4096, ffn=11008, heads=32):
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = nn.Sequential(*[Layer(h, ffn, heads) for _ in range(layers)]).to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    x = torch.randn(1, seq, h, device="cuda", dtype=torch.bfloat16)

    def step():
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed_step():
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        e.synchronize()
        return s.elapsed_time(e) * 1e3

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    time.sleep(idle_s)  # let the clock and power settle back to idle
    cold = [dict(timed_step_us=timed_step(), **nvml_read(hdl)) for _ in range(5)]
    trace, t0 = [], time.time()
    while time.time() - t0 < warm_s:  # steps back to back, as in training
        w = timed_step()
        if not trace or time.time() - t0 - trace[-1]["t_s"] >= 0.5:
            trace.append(dict(t_s=round(time.time() - t0, 3), step_us=w, **nvml_read(hdl)))
    walls = [timed_step() for _ in range(10)]
    from torch.profiler import ProfilerActivity, profile
    nsteps = 3
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        for _ in range(nsteps):
            step()
        torch.cuda.synchronize()
    events = prof.events()
    kernels = [e for e in events if str(getattr(e, "device_type", "")).endswith("CUDA")]
    busy_us, span_us = busy_union_us(kernels)
    in_step = {}
    for e in events:
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            continue
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = getattr(e, "cuda_time_total", 0.0)
        if t <= 0:
            continue
        key = shapes_key(e.name, [s for s in e.input_shapes if isinstance(s, list)])
        in_step.setdefault(key, []).append(t)
    cap = Capture()
    with cap:
        step()
    torch.cuda.synchronize()
    rows = []
    for key, (func, args, kwargs) in cap.ops.items():
        if key not in in_step:
            continue
        try:
            alone = time_alone(func, args, kwargs, reps)
        except Exception as ex:  # noqa: BLE001 - an op that cannot be replayed is reported
            rows.append({"op": key, "error": str(ex)[:200]})
            continue
        ts = in_step[key]
        rows.append({"op": key, "calls_per_step": len(ts) / nsteps,
                     "in_step_us": statistics.mean(ts), "alone_us": alone,
                     "ratio": statistics.mean(ts) / alone if alone > 0 else None})
    return {"layers": layers, "seq": seq, "hidden": h, "ffn": ffn, "heads": heads,
            "idle_s": idle_s, "cold_steps": cold, "warm_s": warm_s, "warm_trace": trace,
            "step_wall_us_median": statistics.median(walls), "step_wall_us_all": walls,
            "profiled_steps": nsteps, "kernel_busy_us": busy_us / nsteps,
            "kernel_span_us": span_us / nsteps, "kernel_count": len(kernels) / nsteps,
            "ops": sorted(rows, key=lambda r: -r.get("in_step_us", 0) * r.get("calls_per_step", 0))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sustained-s", type=float, default=45)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warm-s", type=float, default=40,
                    help="seconds of back-to-back steps before the steps that are timed and profiled")
    ap.add_argument("--idle-s", type=float, default=8,
                    help="idle seconds before the five cold steps")
    o = ap.parse_args()
    hdl = nvml_handle()
    res = {"schema": "ddlsim.insitu", "schema_version": "1.0",
           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
           "nvml": nvml_static(hdl), "idle": nvml_read(hdl)}

    def save():
        with open(o.out + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        import os
        os.replace(o.out + ".tmp", o.out)

    res["sustained"] = sustained(o.sustained_s, hdl) if o.sustained_s > 0 else []
    save()
    w = res["sustained"]
    if w:
        print(f"sustained: first 2 batches {statistics.mean(r['tflops'] for r in w[:2]):.0f} TFLOP/s, "
              f"last 5 {statistics.mean(r['tflops'] for r in w[-5:]):.0f}; clocks first "
              f"{w[0].get('sm_clock_MHz')} last {w[-1].get('sm_clock_MHz')} MHz, power last "
              f"{w[-1].get('power_W')} W, reasons last {w[-1].get('clock_event_reasons')}", flush=True)
    try:
        res["step"] = step_probe(o.layers, o.seq, o.reps, o.warm_s, o.idle_s, hdl, o.hidden, o.ffn, o.heads)
    except Exception:  # noqa: BLE001 - keep the sustained figures
        import traceback
        res["step_error"] = traceback.format_exc()[-2000:]
        save()
        print(res["step_error"])
        return 1
    save()
    s = res["step"]
    tr = s["warm_trace"]
    print("cold steps us:", [round(c["timed_step_us"]) for c in s["cold_steps"]],
          "clocks", [c.get("sm_clock_MHz") for c in s["cold_steps"]])
    for r in tr[:: max(1, len(tr) // 12)] + tr[-1:]:
        print(f"  warm t {r['t_s']:6.1f} s step {r['step_us']:8.0f} us clock {r.get('sm_clock_MHz')} "
              f"power {r.get('power_W')} reasons {r.get('clock_event_reasons')}")
    print(f"step: wall {s['step_wall_us_median']:.0f} us, kernels busy {s['kernel_busy_us']:.0f} us "
          f"({100 * s['kernel_busy_us'] / s['step_wall_us_median']:.1f} %), {s['kernel_count']:.0f} kernels")
    for r in s["ops"][:25]:
        if "error" in r:
            print(f"  {r['op'][:70]:70s} error {r['error'][:60]}")
        else:
            print(f"  {r['op'][:70]:70s} x{r['calls_per_step']:.0f} step {r['in_step_us']:9.1f} "
                  f"alone {r['alone_us']:9.1f} ratio {r['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

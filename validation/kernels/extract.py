#!/usr/bin/env python3
"""Regenerate the CSV files of validation/kernels/ from the public sources.

Every number written here is copied from a source file at a pinned commit,
or converted by exact arithmetic (a time from FLOP/s, a time from elements
per second); see README.md for each file's source, licence, method and what
was kept. Nothing is estimated.

usage: extract.py XLA_GIT LLMCOMPASS_GIT NEUSIGHT_GIT LIGER_GIT OUTDIR
  each *_GIT is a git directory (bare or not) holding the pinned commit:
  openxla/xla (or its ROCm/xla mirror), PrincetonUniversity/LLMCompass,
  sitar-lab/NeuSight, linkedin/Liger-Kernel. The TF32 table (xla_tf32()) is read from XLA_GIT
  too: the file tensorflow carries at TF_COMMIT is openxla/xla's at
  XLA_TF32_COMMIT (either commit will do).
The attention file (attention.csv) is hand-copied from PR and README text
and is not written by this script.
"""
import csv
import io
import json
import re
import statistics
import subprocess
import sys

XLA_COMMIT = "ad6eaee1b2f13931e3ceb26dc50bf3ac6b425496"
XLA_PATH = "xla/service/gpu/model/default_matmul_perf_table.txtpb"
# the TF32 table (xla_tf32): tensorflow/tensorflow's copy of XLA's H100
# matmul table; openxla/xla holds the same file (79,026 bytes; README.md
# says how it was compared) at XLA_TF32_COMMIT, 2025-08-12, "[XLA:GPU] Update Latency-hiding
# scheduler cost model for GEMMS on H100"
TF_COMMIT = "372d578bb861cc5804e56d37d93aec931a59762c"
TF_PATH = "third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h"
XLA_TF32_COMMIT = "b2766086ecf90e6e0a52b32f3b1837348859027f"
XLA_TF32_PATH = "xla/service/gpu/model/matmul_interpolator_data.h"
LLMC_COMMIT = "b95c6c95a80071414d31da8ba8d2e62334753f3d"
NEU_COMMIT = "6945927d9afcca2b9daf021f8395e53edc5b4eef"
LIGER_COMMIT = "ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c"
LIGER_PATH = "benchmark/data/all_benchmark_data.csv"
LIGER_GPUS = {  # gpu_name in the table: (ddlsim preset, output file)
    "NVIDIA H100 80GB HBM3": ("h100-sxm5-80gb", "liger-h100-membound.csv"),
    "NVIDIA A100-SXM4-80GB": ("a100-sxm4-80gb", "liger-a100-membound.csv"),
}

HOST_RATIO = 10  # keep a host-timed point when time >= HOST_RATIO x host floor


def show(git, commit, path):
    return subprocess.check_output(["git", "--git-dir", git, "show", f"{commit}:{path}"]).decode()


def fmt(x, nd=3):
    s = f"{x:.{nd}f}"
    return s.rstrip("0").rstrip(".") if "." in s else s


def xla(git, out):
    text = show(git, XLA_COMMIT, XLA_PATH)
    sec = text.split('key: "sm_90"')[1]
    ents = re.findall(r"entries \{\s*b: (\d+)\s*m: (\d+)\s*n: (\d+)\s*k: (\d+)\s*((?:flops \{[^}]*\}\s*)+)\}", sec)
    # bf16 only: 29 of the 375 f8e4m3fn x f8e4m3fn rows exceed the H100
    # dense fp8 peak (1979 TFLOP/s, up to 2593), so those times cannot all
    # be whole-GEMM kernel times (README.md)
    keep = {"bf16xbf16->bf16": "bf16"}
    rows = []
    for b, m, n, k, fl in ents:
        b, m, n, k = int(b), int(m), int(n), int(k)
        for key, val in re.findall(r'flops \{ key: "([^"]*)" value: (\d+) \}', fl):
            if key not in keep:
                continue
            flops = int(val)
            # matmul_perf_table_gen.cc: value = 2bmnk * 1e9 / kernel ns
            t_us = 2.0 * b * m * n * k / flops * 1e6
            rows.append(["h100-sxm5-80gb", keep[key], b, m, n, k, fmt(t_us), fmt(flops / 1e12, 6)])
    rows.sort(key=lambda r: (r[1], r[2], r[3], r[4], r[5]))
    with open(f"{out}/xla-h100-gemm.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "dtype", "batch", "m", "n", "k", "time_us", "tflops"])
        w.writerows(rows)
    return len(rows)


def xla_tf32(git, out):
    """The f32 x f32 -> f32 dots of the sm_90 table, as dtype tf32.

    XLA compiles an f32 dot at its default precision, which lets cuBLAS and
    Triton use TF32 tensor cores on sm_80+ (README.md: the table's 4096^3
    point is 401.6 TFLOP/s, 6x H100's 67 TFLOP/s FP32 peak)."""
    text = None
    for commit, path in ((TF_COMMIT, TF_PATH), (XLA_TF32_COMMIT, XLA_TF32_PATH)):
        if subprocess.run(["git", "--git-dir", git, "cat-file", "-e", f"{commit}:{path}"],
                          capture_output=True).returncode == 0:
            text = show(git, commit, path)
            break
    if text is None:
        sys.exit(f"{git}: neither {TF_COMMIT}:{TF_PATH} nor {XLA_TF32_COMMIT}:{XLA_TF32_PATH}")
    sec = text.split('key: "sm_90"')[1]
    ents = re.findall(r"entries \{\s*b: (\d+)\s*m: (\d+)\s*n: (\d+)\s*k: (\d+)\s*((?:flops \{[^}]*\}\s*)+)\}", sec)
    rows = []
    for b, m, n, k, fl in ents:
        b, m, n, k = int(b), int(m), int(n), int(k)
        for key, val in re.findall(r'flops \{ key: "([^"]*)" value: (\d+) \}', fl):
            if key != "f32xf32->f32":
                continue
            flops = int(val)
            # matmul_perf_table_gen.cc: value = 2bmnk * 1e9 / kernel ns
            t_us = 2.0 * b * m * n * k / flops * 1e6
            rows.append(["h100-sxm5-80gb", "tf32", b, m, n, k, fmt(t_us), fmt(flops / 1e12, 6)])
    rows.sort(key=lambda r: (r[2], r[3], r[4], r[5]))
    with open(f"{out}/xla-h100-tf32-gemm.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "dtype", "batch", "m", "n", "k", "time_us", "tflops"])
        w.writerows(rows)
    return len(rows)


def llmcompass(git, out):
    g = []
    # matmul: "M, N, K, 0.1900ms, 101.7124Tflops"; torch.matmul of bf16
    # (software_model/matmul.py, Matmul.run_on_gpu)
    lines = [l for l in show(git, LLMC_COMMIT, "ae/figure5/ab/real_hardware/matmul_A100.csv").splitlines() if l.strip()]
    pts = []
    for l in lines:
        M, N, K, t, tf = [x.strip() for x in l.split(",")]
        pts.append((int(M), int(N), int(K), float(t.replace("ms", "")) * 1e3, tf.replace("Tflops", "")))
    floor = min(p[3] for p in pts)
    for M, N, K, t, tf in pts:
        if t >= HOST_RATIO * floor:
            g.append(["a100-sxm4-80gb", "bf16", 1, M, N, K, fmt(t, 1), tf, fmt(floor, 1), "figure5/ab"])
    # the GPT-3 175B layer at TP 4, b 8, s 2048 (transformer.py, run_on_gpu):
    # seconds, in the order of plot_transformer.py's categories
    v = [float(x) for x in show(git, LLMC_COMMIT, "ae/figure5/ijkl/real_hardware/transformer_A100.csv").split()]
    T, d = 8 * 2048, 12288
    layer = [  # (row, batch, m, n, k, dtype, divide)
        (0, 1, T, d // 4, d, "bf16", 3),    # Q_K_V: one of three equal GEMMs, timed once, x3
        (1, 192, 2048, 2048, 128, "fp16", 1),  # Q_mul_K: bmm (BatchedMatmul, fp16)
        (2, 192, 2048, 128, 2048, "fp16", 1),  # A_mul_V
        (3, 1, T, d, d // 4, "bf16", 1),    # Wo_proj
        (4, 1, T, d, d, "bf16", 1),         # W1_proj (4d/4 = d)
        (5, 1, T, d, d, "bf16", 1),         # W2_proj
    ]
    for i, b, m, n, k, dt, div in layer:
        t = v[i] / div * 1e6
        g.append(["a100-sxm4-80gb", dt, b, m, n, k, fmt(t, 1), fmt(2.0 * b * m * n * k / (t * 1e-6) / 1e12, 4),
                  "", "figure5/ijkl"])
    with open(f"{out}/llmcompass-a100-gemm.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "dtype", "batch", "m", "n", "k", "time_us", "tflops", "host_floor_us", "figure"])
        w.writerows(g)

    mb = []
    for fig, name, kern, rowwise in (("cf", "softmax", "softmax", True), ("de", "layernorm", "layernorm", True)):
        pts = []
        for l in show(git, LLMC_COMMIT, f"ae/figure5/{fig}/real_hardware/{name}_A100.csv").splitlines():
            if not l.strip():
                continue
            M, N, thr = [x.strip() for x in l.split(",")]
            M, N = int(M), int(N)
            pts.append((M, N, M * N / (float(thr) * 1e9) * 1e6))  # thr = M N / latency / 1e9
        floor = min(p[2] for p in pts)
        for M, N, t in pts:
            if t >= HOST_RATIO * floor:
                mb.append(["a100-sxm4-80gb", kern, "fwd", "fp16", M, N, fmt(t, 1), fmt(floor, 1), f"figure5/{fig}"])
    pts = []
    for l in show(git, LLMC_COMMIT, "ae/figure5/g/real_hardware/gelu_A100.csv").splitlines():
        if not l.strip():
            continue
        M, thr = [x.strip() for x in l.split(",")]
        pts.append((int(M), int(M) / (float(thr) * 1e9) * 1e6))
    floor = min(p[1] for p in pts)
    for M, t in pts:
        if t >= HOST_RATIO * floor:
            mb.append(["a100-sxm4-80gb", "gelu", "fwd", "fp16", 1, M, fmt(t, 1), fmt(floor, 1), "figure5/g"])
    # GPT-3 layer: softmax over [8, 24, 2048, 2048]; layernorm and GeLU over
    # [8, 2048, 12288] (layernorm minus its own launch-overhead measurement)
    mb.append(["a100-sxm4-80gb", "softmax", "fwd", "fp16", 8 * 24 * 2048, 2048, fmt(v[6] * 1e6, 1), "", "figure5/ijkl"])
    mb.append(["a100-sxm4-80gb", "layernorm", "fwd", "fp16", T, d, fmt(v[7] * 1e6, 1), "", "figure5/ijkl"])
    mb.append(["a100-sxm4-80gb", "gelu", "fwd", "fp16", T, d * 4 // 4, fmt(v[9] * 1e6, 1), "", "figure5/ijkl"])
    with open(f"{out}/llmcompass-a100-membound.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "kernel", "pass", "dtype", "rows", "row_len", "time_us", "host_floor_us", "figure"])
        w.writerows(mb)
    return len(g), len(mb)


def neusight(git, out):
    # the host floor: FX nodes that launch no kernel (size, getitem) in
    # NeuSight's own H100 trace, timed with the same CUDA-event bracket
    tr = list(csv.DictReader(io.StringIO(show(git, NEU_COMMIT,
              "scripts/asplos/label/NVIDIA_H100_80GB_HBM3/gpt3_27-train-2048-1.csv"))))
    nok = [float(x["fw_latency"]) * 1e3 for x in tr
           if x["target"] in ("size", "<built-in function getitem>") and x["op"] in ("call_method", "call_function")]
    floor = statistics.median(nok)
    thr = HOST_RATIO * floor

    # fp16 bmm on H100 (fp16mm.csv, written by fp16mm_exp.py: x[B,M,N] @ y[B,N,K])
    bm = []
    for x in csv.DictReader(io.StringIO(show(git, NEU_COMMIT, "scripts/asplos/fp16mm.csv"))):
        t = float(x["Latency"]) * 1e3
        if t >= thr:
            B, M, N, K = int(x["B"]), int(x["M"]), int(x["N"]), int(x["K"])
            bm.append(["h100-sxm5-80gb", "fp16", B, M, K, N, fmt(t, 2)])
    with open(f"{out}/neusight-h100-bmm.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "dtype", "batch", "m", "n", "k", "time_us"])
        w.writerows(bm)

    # kernel-level fp32 layernorm / softmax / elementwise on A100-PCIE-40GB
    mb = []
    for fname in ("ln", "softmax", "elem"):
        for x in csv.DictReader(io.StringIO(show(git, NEU_COMMIT, f"scripts/asplos/data/dataset/test/{fname}.csv"))):
            if x["Device"] != "NVIDIA A100-PCIE-40GB":
                continue
            t = float(x["Latency"]) * 1e3
            if t < thr:
                continue
            op = x["OPName"]
            kern = {"ln": "layernorm"}.get(op, op)
            mb.append(["a100-sxm4-40gb", kern, "fwd", "fp32", int(x["B"]), int(x["H"]), fmt(t, 2)])
    with open(f"{out}/neusight-a100-membound.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "kernel", "pass", "dtype", "rows", "row_len", "time_us"])
        w.writerows(mb)

    # per-FX-node fwd/bwd of HF GPT-3 2.7B (GPT-2 code), b 1, s 2048, fp32, layer 0
    hm = []
    nodes = {
        "transformer_h_0_ln_1": ("layernorm", 2048, 2560),
        "softmax": ("softmax", 32 * 2048, 2048),
        "transformer_h_0_attn_attn_dropout": ("dropout", 32 * 2048, 2048),
        "transformer_h_0_attn_resid_dropout": ("dropout", 2048, 2560),
    }
    for x in tr:
        if x["Name"] not in nodes:
            continue
        kern, rows, rl = nodes[x["Name"]]
        for ps, col in (("fwd", "fw_latency"), ("bwd", "bw_latency")):
            t = float(x[col]) * 1e3
            if t >= thr:
                hm.append(["h100-sxm5-80gb", kern, ps, "fp32", rows, rl, fmt(t, 2), x["Name"]])
    with open(f"{out}/neusight-h100-membound.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "kernel", "pass", "dtype", "rows", "row_len", "time_us", "node"])
        w.writerows(hm)
    return floor, len(bm), len(mb), len(hm)


def liger_gpu(text, gpu_name, preset):
    """The kept rows of one GPU of Liger-Kernel's table, and its floor."""
    pts = [x for x in csv.DictReader(io.StringIO(text))
           if x["gpu_name"] == gpu_name and x["metric_name"] == "speed"]
    floor = min(float(x["y_value_50"]) for x in pts) * 1e3
    want = {  # (kernel_name, kernel_provider): suite kind
        ("layer_norm", "huggingface"): "layernorm",
        ("megatron_rms_norm", "torch"): "rmsnorm",
    }
    dts = {"torch.float32": "fp32", "torch.bfloat16": "bf16"}
    rows = []
    for x in pts:
        kind = want.get((x["kernel_name"], x["kernel_provider"]))
        if kind is None or x["kernel_operation_mode"] != "forward":
            continue
        cfg = json.loads(x["extra_benchmark_config_str"])
        if kind == "layernorm":  # x = N (row), M rows, dtype in the config
            nrows, dt = cfg["M"], dts[cfg["dtype"]]
        else:  # x = H (row), [S, B, H], bf16 (_make_input, _make_layer)
            nrows, dt = cfg["S"] * cfg["B"], "bf16"
        t = float(x["y_value_50"]) * 1e3
        if t < HOST_RATIO * floor:
            continue
        src = (f"linkedin/Liger-Kernel@{LIGER_COMMIT[:7]} {LIGER_PATH}: {x['kernel_name']} "
               f"{x['kernel_provider']} forward {x['x_name']}={x['x_value']} {x['timestamp']}")
        rows.append([preset, kind, "fwd", dt, nrows, int(x["x_value"]), fmt(t, 2),
                     fmt(floor, 2), src])
    return floor, rows


def liger(git, out):
    """PyTorch's own norm kernels on H100 and A100 80GB, from Liger-Kernel's
    benchmark table: the forward of torch.nn.LayerNorm (provider
    "huggingface", benchmark_layer_norm.py) and of torch.nn.RMSNorm
    (provider "torch", benchmark_megatron_rms_norm.py; H100 only). Both are
    timed with triton's do_bench (CUDA events around each call, median);
    the host floor is the file's smallest speed point on the same GPU. One
    output file per GPU."""
    text = show(git, LIGER_COMMIT, LIGER_PATH)
    res = []
    for gpu_name, (preset, fname) in LIGER_GPUS.items():
        floor, rows = liger_gpu(text, gpu_name, preset)
        with open(f"{out}/{fname}", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["gpu", "kernel", "pass", "dtype", "rows", "row_len", "time_us",
                        "host_floor_us", "source"])
            w.writerows(rows)
        res.append((preset, fmt(floor, 2), len(rows)))
    return res


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    xg, lg, ng, lkg, out = sys.argv[1:]
    print("xla rows", xla(xg, out))
    print("xla tf32 rows", xla_tf32(xg, out))
    print("llmcompass gemm, membound", llmcompass(lg, out))
    print("neusight floor_us, bmm, a100 membound, h100 membound", neusight(ng, out))
    print("liger (preset, floor_us, membound rows)", liger(lkg, out))

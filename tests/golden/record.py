#!/usr/bin/env python3
"""Record the golden numbers: run every shipped scenario and write
tests/golden/golden.json with the headline figures test-golden.c holds
every later build to (1e-9 relative), each figure with its path in
report.json (this table is their one home: test-golden.c reads the paths
from golden.json, test-megatron.c reads the Megatron rows' figures); then
the plan screen's estimates, tests/golden/screen.json, which
test-screen.c holds to 1e-12 (written by that test itself with
DDLSIM_RECORD_SCREEN set).

Usage: tests/golden/record.py [BUILD_DIR]   (default: build)

Run it only when a change moves the numbers on purpose, and say why in
the commit message that carries the new golden.json."""
import json, os, subprocess, sys, tempfile

FIGURES = [  # (name in golden.json, path in report.json)
    ("iteration_time_s", "summary/iteration_time_s"),
    ("tokens_per_s", "summary/tokens_per_s"),
    ("mfu", "summary/mfu"),
    ("hfu", "summary/hfu"),
    ("memory_worst_total_GB", "memory/worst_total_GB"),
    ("compute_s", "breakdown/mean/compute_s"),
    ("exposed_comm_s", "breakdown/mean/exposed_comm_s"),
    ("bubble_s", "breakdown/mean/bubble_s"),
    ("hardware_tflops_per_gpu", "summary/hardware_tflops_per_gpu"),
]

def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
    exe = os.path.join(build, "cli", "ddlsim")
    if not os.path.exists(exe):
        exe = os.path.join(build, "sim", "cli", "ddlsim")
    scen = []
    for d, _, files in os.walk(os.path.join(root, "scenarios")):
        scen += [os.path.relpath(os.path.join(d, f), root) for f in files
                 if f.endswith(".json")]
    rows = []
    for rel in sorted(scen):
        with open(os.path.join(root, rel)) as f:
            if json.load(f).get("schema") != "ddlsim.scenario":
                continue  # sweeps, goals: not one scenario
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([exe, "run", os.path.join(root, rel), "--out", out,
                            "--quiet", "--format", "json"], check=True)
            with open(os.path.join(out, "report.json")) as f:
                rep = json.load(f)
        row = {"scenario": rel}
        for name, path in FIGURES:
            v = rep
            for k in path.split("/"):
                v = v[k]
            row[name] = v
        rows.append(row)
        print(rel, row["iteration_time_s"], file=sys.stderr)
    doc = {"schema": "ddlsim.golden", "schema_version": "2.0",
           "figures": {n: p for n, p in FIGURES}, "scenarios": rows}
    path = os.path.join(root, "tests", "golden", "golden.json")
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)
    screen = os.path.join(root, "tests", "golden", "screen.json")
    env = dict(os.environ, DDLSIM_RECORD_SCREEN=screen, DDLSIM_SOURCE_DIR=root,
               DDLSIM_BIN=exe)
    subprocess.run([os.path.join(build, "tests", "test-screen"),
                    "--filter", "screen/estimates_are_the_recorded_ones"],
                   check=True, env=env)

main()

#!/bin/bash
# calib/gpu-session.sh - one short GPU lease's measurement plan, in order of value.
#
# Runs from the repository root on a machine with one NVIDIA GPU and keeps
# everything it measured under $OUT (results.tgz, refreshed after every
# step, so a run cut short still returns what it finished).  Each step has
# its own time limit inside the budget (first argument, seconds):
#
#   1. provenance: nvidia-smi -q, versions; a clock/power log every 250 ms
#      for the whole session (clocks.csv) with step marks (steps.log);
#   2. ddlsim-calib --self-test;
#   3. --quick profiles, one section each (a failed check ends only its
#      section): gemm (+ interference), attn (again --no-sdpa if cuDNN's
#      fused attention fails), mem, conv, bw;
#   4. calib/insitu_probe.py: sustained clock under GEMM load; kernels in a
#      training step against the same kernels alone;
#   5. with the time left: the full gemm, then the full attn and mem grids.
#
# The calib binary comes from $CALIB_BIN (default .devcarry/ddlsim-calib,
# built on the host with the same CUDA major version) with its libraries
# found in .devcarry, /usr/local/cuda and the Python wheels' nvidia/*/lib.
# It never changes a GPU setting.
set -u
BUDGET_S=${1:-540}
OUT=${OUT:-/tmp/calib-out}
W=/tmp/calib-work
BIN=${CALIB_BIN:-.devcarry/ddlsim-calib}
T0=$(date +%s)
mkdir -p "$OUT" "$W"

left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
mark() { echo "$(date +%s.%N) $*" >>"$W/steps.log"; echo "== $* (left $(left) s)"; }
pack() { tar czf "$OUT/results.tgz.tmp" -C "$W" . && mv "$OUT/results.tgz.tmp" "$OUT/results.tgz"; }
# step NAME MAX_S CMD...: runs CMD with stdout+stderr in NAME.log, bounded by
# MAX_S and by the budget, and records its exit code.
step() {
	local name=$1 max=$2 lim
	shift 2
	lim=$(left)
	lim=$((lim - 10))
	[ "$lim" -gt "$max" ] && lim=$max
	if [ "$lim" -lt 15 ]; then
		mark "skip $name (no time)"
		return 1
	fi
	mark "start $name (limit $lim s)"
	timeout -k 5 "$lim" "$@" >"$W/$name.log" 2>&1
	local rc=$?
	mark "end $name rc=$rc"
	echo "$name rc=$rc" >>"$W/summary.txt"
	tail -n 3 "$W/$name.log"
	pack
	return $rc
}

libdirs=$PWD/.devcarry:/usr/local/cuda/lib64
for d in $(python3 -c "import glob,site; [print(p) for s in site.getsitepackages() for p in sorted(glob.glob(s + '/nvidia/*/lib'))]" 2>/dev/null); do
	libdirs=$libdirs:$d
done
export LD_LIBRARY_PATH=$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1

mark "provenance"
{
	date -u
	uname -a
	nvidia-smi
	nvidia-smi --query-gpu=name,driver_version,pstate,power.limit,power.default_limit,enforced.power.limit,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem --format=csv
	nvcc --version 2>/dev/null | tail -1
	python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())" 2>&1
	echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
	ldd "$BIN"
} >"$W/provenance.txt" 2>&1
nvidia-smi -q >"$W/nvidia-smi-q.txt" 2>&1
fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv,noheader >/dev/null 2>&1 ||
	fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu
echo "$fields" >"$W/clocks.csv"
nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 250 >>"$W/clocks.csv" 2>&1 &
logger=$!
pack

step selftest 120 "$BIN" --self-test
for s in gemm attn mem conv bw; do
	case $s in gemm) lim=120 ;; attn) lim=90 ;; *) lim=60 ;; esac
	step "quick-$s" $lim "$BIN" --quick --only $s --out "$W/quick-$s.json" --csv "$W/quick-$s.csv"
	if [ $? -ne 0 ] && [ $s = attn ]; then
		step quick-attn-nosdpa 60 "$BIN" --quick --only attn --no-sdpa \
			--out "$W/quick-attn-nosdpa.json" --csv "$W/quick-attn-nosdpa.csv"
	fi
done
step insitu 150 python3 calib/insitu_probe.py "$W/insitu.json"
step full-gemm 400 "$BIN" --only gemm --out "$W/full-gemm.json" --csv "$W/full-gemm.csv"
step full-attn 200 "$BIN" --only attn --out "$W/full-attn.json" --csv "$W/full-attn.csv"
step full-mem 200 "$BIN" --only mem --out "$W/full-mem.json" --csv "$W/full-mem.csv"

kill "$logger" 2>/dev/null
mark "done"
pack
echo "---- summary"
cat "$W/summary.txt"
grep -h "passed, .* failed" "$W/selftest.log" 2>/dev/null
grep -h "^sustained\|^step" "$W/insitu.log" 2>/dev/null

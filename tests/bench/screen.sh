#!/usr/bin/env bash
# Benchmark: the plan search's screen (plan_check, memory anatomy, the
# closed-form estimate: sim/search.c) against the cluster size, issue 25
# item 5. One goal, Llama 3 70B at 8k tokens on DGX H100 nodes of the
# 3-level fat tree (topologies/dgx-h100-fattree3.json), screened alone
# (--screen-only) at 512, 2,048, 4,096 and 16,384 GPUs. The goal lists
# the cluster K = 8 times (each cluster is screened with a cache of its
# own), so a run screens it 8 times and the CPU time is well above the
# clock's 10 ms. Prints per size the plans enumerated per screen, the
# screen's microseconds per plan on its own (wall) clock ("plans/s" of
# `ddlsim plan`), the process's CPU time (user + system, start and
# loading included) per plan, its CPU seconds and peak RSS: medians of
# RUNS runs (RSS: the largest).
#
# Measured 2026-11-26 (2 cores shared with other jobs, load 10-13,
# debugoptimized; CPU us per plan: medians of 5 runs; instructions per
# enumerated plan: callgrind, one screen, search_screen inclusive):
#
#   GPUs     plans   before: CPU us  instr     after: CPU us  instr
#   512      18768           2.93   28.9k             2.20   19.1k
#   2,048    17124           3.72   38.7k             2.04   17.4k
#   4,096    14928           4.61   47.5k             2.26   18.2k
#   16,384    8088          10.35  108.2k             2.78   21.4k
#
# Before: every collective priced by building its plan (O(P log P) flows
# for a data-parallel group of up to 16,384 ranks). After: closed forms
# without flows (fabric/coll_time.c), prices found by hash, a rejected
# plan's message formatted once. What is left at 16,384 GPUs is the mix:
# 72 % of its plans are rejected by plan_check (44 % at 512), and a
# rejection costs more than a screened plan. CPU us include the process's
# start and loading, spread over fewer plans at 16,384 GPUs.
#
# Rejections, 2026-11-26 (same machine, load about 1-2, debugoptimized;
# us per plan: the screen's wall clock, 2 x 5 runs; instructions:
# callgrind, one screen of one cluster, K = 1):
#
#   GPUs     before: us   instr/plan  instr/rejection   after: us   instr/plan  instr/rejection
#   512      2.13-2.26    19.3k       19.1k                   2.00-2.06  15.2k       10.0k
#   16,384   2.47-2.78    21.7k       20.2k                   1.85       14.2k        9.8k
#
# A rejection formatted every problem plan_check found, printf'd the
# first into the tally's line and escaped it twice. Now the screen's diag
# keeps only the first message (diag_first_only: the rest counted, not
# formatted), copies it without printf, escapes only what has a control
# character (models/diag.c, util/reasons.c), and plan_check formats the
# SM-margin paths only when set. The output is the same, byte for byte.
# Usage: tests/bench/screen.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-5}
bin=$build/cli/ddlsim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

med() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

K=8
printf "%-8s %8s %10s %12s %12s %10s %12s\n" gpus nodes plans us_per_plan cpu_us_plan cpu_s peak_rss_MB
for nodes in 64 256 512 2048; do
	cl=""
	for k in $(seq "$K"); do
		cl="$cl${cl:+,}{\"name\": \"ft3-$k\", \"topology\": \"$PWD/topologies/dgx-h100-fattree3.json\",
   \"nodes\": [$nodes], \"economics\": {\"usd_per_gpu_hour\": 2.5}}"
	done
	cat > "$out/g.json" <<JSON
{"schema": "ddlsim.goal", "schema_version": "1.0", "name": "screen$nodes",
 "model": "$PWD/models/zoo/llama3-70b.json", "seq_len": 8192,
 "train_tokens": 15e12, "deadline_days": 90,
 "global_batch_tokens": {"min": 4000000, "max": 16777216}, "top": 20,
 "clusters": [$cl]}
JSON
	us=() cpu=() cus=() peak=0 plans=0
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%U %S %M" -o "$out/t" "$bin" plan "$out/g.json" --screen-only \
			--out "$out/o" > "$out/s"
		read -r u s m < "$out/t"
		plans=$(grep -m1 'plans enumerated' "$out/s" | sed -n 's/.*: \([0-9]*\) plans enumerated.*/\1/p')
		line=$(grep -m1 '^screen: ' "$out/s")
		all=$(echo "$line" | sed -n 's/^screen: \([0-9]*\) plans in .*/\1/p')
		secs=$(echo "$line" | sed -n 's/.* plans in \([0-9.]*\) s,.*/\1/p')
		us+=("$(awk -v s="$secs" -v n="$all" 'BEGIN{printf "%.2f", s / n * 1e6}')")
		cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')")
		cus+=("$(awk -v u="$u" -v s="$s" -v n="$all" 'BEGIN{printf "%.2f", (u + s) / n * 1e6}')")
		[ "$m" -gt "$peak" ] && peak=$m
	done
	printf "%-8s %8s %10s %12s %12s %10s %12.1f\n" $((nodes * 8)) "$nodes" "$plans" \
		"$(printf "%s\n" "${us[@]}" | med)" "$(printf "%s\n" "${cus[@]}" | med)" \
		"$(printf "%s\n" "${cpu[@]}" | med)" \
		"$(awk -v k="$peak" 'BEGIN{print k/1024}')"
done

#!/usr/bin/env bash
# Benchmark: wall time and peak memory of ddlsim on the reference
# scenarios (median of N runs). Usage: tests/bench/run.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-3}
bin=$build/cli/ddlsim
[ -x "$bin" ] || bin=$build/sim/cli/ddlsim   # trees before cli/ moved to the top
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# scenario, optional override of simulation.fold ("" = as shipped),
# optional environment of the run (NAME=value)
cases=(
	"scenarios/quickstart.json|"
	"scenarios/gpt3-175b-dp1024.json|"
	"scenarios/gpt3-175b-dp1024.json|off"
	"scenarios/megatron/145b.json|"
	"scenarios/megatron/1t.json|"
	# issue 16: Llama-3 405B, TP 8 x PP 16, seq 8192, 16M tokens, fat tree 3 levels
	"tests/bench/scenarios/llama3-405b-1024.json|"
	"tests/bench/scenarios/llama3-405b-2048.json|"
	"tests/bench/scenarios/llama3-405b-4096.json|"
	"tests/bench/scenarios/llama3-405b-8192.json|"
	"tests/bench/scenarios/llama3-405b-16384.json|"
	# the stretch: 98,304 H100 on a 3-level fat tree of 128-port switches
	"tests/bench/scenarios/llama3-405b-98304.json|"
	# auto class-folds its partly filled leaf (100 of 256 ranks); "on"
	# folds it with one replica; "off", every rank, is the reference for
	# both (issue 25: CPU and iteration time against the unfolded row)
	"tests/bench/scenarios/llama2-70b-256-fattree2-2to1.json|"
	"tests/bench/scenarios/llama2-70b-256-fattree2-2to1.json|on"
	"tests/bench/scenarios/llama2-70b-256-fattree2-2to1.json|off"
	"tests/bench/scenarios/llama2-70b-256-rail.json|"
	# issue 42: the same model on 1,024 GPUs of that tree, 128
	# micro-batches a replica, every rank simulated (done when <= 30 CPU
	# s and 600 MB)
	"tests/bench/scenarios/llama2-70b-1024-fattree2-2to1.json|off"
	# issue 25, item 4: expert-parallel all-to-alls of a training run over
	# 4 nodes, every rank of 1,024 simulated: one flow per NIC while alone
	# (engine/engine_classes.c), then the same run with pairs only
	"tests/bench/scenarios/mixtral-8x7b-ep8x4nodes-1024.json|"
	"tests/bench/scenarios/mixtral-8x7b-ep8x4nodes-1024.json||collective_pairs"
	# EP 8 over 8 nodes, one GPU of each (TP 8): 7 flows per NIC become 1
	"tests/bench/scenarios/mixtral-8x7b-ep8x8nodes-1024.json|"
	"tests/bench/scenarios/mixtral-8x7b-ep8x8nodes-1024.json||collective_pairs"
	# DeepSeek-V3, EP 256 over 32 nodes, folded (auto: each simulated
	# rank posts its own flows)
	"tests/bench/scenarios/deepseek-v3-ep256-1024.json|"
	# issue 42, item 5: a mixed cluster (64 DGX H100 + 64 DGX A100), two
	# classes of replicas folded one per class (auto), against every rank
	"scenarios/whatif/llama2-13b-mixed-h100-a100-1024.json|"
	"scenarios/whatif/llama2-13b-mixed-h100-a100-1024.json|off"
)

printf "%-48s %-6s %10s %10s %10s %12s %10s %12s\n" scenario fold wall_s_med wall_s_min cpu_s_med peak_rss_MB ranks iteration_s
for c in "${cases[@]}"; do
	scn=${c%%|*}
	rest=${c#*|}
	fold=${rest%%|*}
	key=
	[ "$rest" != "$fold" ] && key=${rest#*|}
	file=$scn
	if [ -n "$fold$key" ]; then
		file=$out/$(basename "$scn" .json)-fold-$fold-$key.json
		python3 - "$scn" "$file" "$fold" "$key" <<'PY'
import json, os, sys
src, dst, fold, key = sys.argv[1:]
s = json.load(open(src))
base = os.path.dirname(os.path.abspath(src))
for k in ("model", "topology"):
    s[k] = os.path.join(base, s[k])
for g in s.get("node_groups", []):  # mixed clusters: each group's GPU preset
    g["gpu"] = os.path.join(base, g["gpu"])
if fold:
    s.setdefault("simulation", {})["fold"] = fold
if key:  # a simulation switch for checks (sim/scenario.h)
    s.setdefault("simulation", {})[key] = True
json.dump(s, open(dst, "w"))
PY
	fi
	times=()
	cpus=()
	peak=0
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M %U %S" -o "$out/t" "$bin" run "$file" --out "$out/r" --quiet --format json
		read -r t m u s < "$out/t"
		times+=("$t")
		cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')")
		[ "$m" -gt "$peak" ] && peak=$m
	done
	sorted=$(printf "%s\n" "${times[@]}" | sort -g)
	med=$(echo "$sorted" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	min=$(echo "$sorted" | head -1)
	cpu=$(printf "%s\n" "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	read -r ranks iter < <(python3 -c "import json;j=json.load(open('$out/r/report.json'));r=j['simulation'];print('%d/%d'%(r['simulated_ranks'],r['ranks']),j['summary']['iteration_time_s'])")
	printf "%-48s %-6s %10s %10s %10s %12.1f %10s %12.6f %s\n" "$scn" "${fold:-auto}" "$med" "$min" "$cpu" "$(awk -v k="$peak" 'BEGIN{print k/1024}')" "$ranks" "$iter" "$key"
done

# issue 16: 1 GiB all-to-all on the 3-level fat tree: 1,024 ranks rail-aligned
# (direct alone, issue 25: the NVLink stage and one flow per NIC, 8,192
# flows; in a training run the same while nothing else crosses its NICs,
# its 130,048 pairs from the instant anything does, engine/engine_classes.c),
# and 256 ranks both ways (pairwise: P(P-1) flows)
for c in "128|direct" "32|direct" "32|pairwise"; do
	nodes=${c%%|*}
	algo=${c#*|}
	/usr/bin/time -f "%e %M" -o "$out/t" "$bin" collective \
		--topology topologies/dgx-h100-fattree3.json --nodes "$nodes" -g 8 --ops alltoall \
		--algo "$algo" -b 1G -e 1G > /dev/null || true
	read -r t m < "$out/t" || true
	printf "%-48s %-6s %10s %10s %12.1f %10s\n" "alltoall 1GiB x $((nodes * 8)) ranks $algo" - "$t" "$t" \
		"$(awk -v k="${m:-0}" 'BEGIN{print k/1024}')" $((nodes * 8))
done

# platform load time (report.json simulation.platform_s) against nodes:
# Llama 3 8B, TP 8 x DP = nodes, ring, on the 3-level fat tree (at most
# 8,192 nodes: 64 pods of 32 leaves of 4); the exponent is the
# least-squares slope of log time on log nodes
printf "\n%-10s %12s %10s\n" nodes platform_s wall_s
pts=""
for nodes in 256 512 1024 2048 4096 8192; do
	printf '{"schema":"ddlsim.scenario","schema_version":"1.0","name":"pl%s","model":"%s","topology":"%s","nodes":%s,"parallel":{"tp":8,"dp":%s},"training":{"seq_len":8192,"global_batch":%s,"micro_batch":1,"precision":"bf16"},"communication":{"algorithm":"ring"}}\n' \
		"$nodes" "$PWD/models/zoo/llama3-8b.json" "$PWD/topologies/dgx-h100-fattree3.json" \
		"$nodes" "$nodes" "$nodes" > "$out/pl.json"
	"$bin" run "$out/pl.json" --out "$out/pl" --quiet --format json
	read -r ps ws < <(python3 -c "import json;s=json.load(open('$out/pl/report.json'))['simulation'];print(s['platform_s'],s['wall_s'])")
	printf "%-10s %12.4f %10.2f\n" "$nodes" "$ps" "$ws"
	pts="$pts $nodes:$ps"
done
python3 -c '
import math, sys
xy = [tuple(map(float, a.split(":"))) for a in sys.argv[1:]]
lx = [math.log(x) for x, _ in xy]; ly = [math.log(max(y, 1e-9)) for _, y in xy]
mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
k = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
print("platform load time ~ nodes^%.2f (%d to %d nodes)" % (k, xy[0][0], xy[-1][0]))
' $pts

# whole platforms (every GPU, what a run without folding or with exact
# folding builds): `ddlsim validate --platform`, 3-level fat tree
fit() {
	python3 -c '
import math, sys
xy = [tuple(map(float, a.split(":"))) for a in sys.argv[2:]]
lx = [math.log(x) for x, _ in xy]; ly = [math.log(max(y, 1e-9)) for _, y in xy]
mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
k = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
print("%s ~ nodes^%.2f (%d to %d nodes)" % (sys.argv[1], k, xy[0][0], xy[-1][0]))
' "$@"
}
printf "\n%-10s %8s %12s %10s %12s\n" nodes gpus platform_s wall_s peak_rss_MB
pts=""
for nodes in 256 512 1024 2048 4096 8192 16384; do
	topo=topologies/dgx-h100-fattree3.json
	[ "$nodes" -gt 8192 ] && topo=topologies/dgx-h100-fattree3-r128.json
	/usr/bin/time -f "%e %M" -o "$out/t" "$bin" validate --platform "$nodes" "$topo" > "$out/v"
	read -r ws m < "$out/t"
	ps=$(sed -n 's/.* built in \([0-9.]*\) s$/\1/p' "$out/v")
	printf "%-10s %8s %12s %10s %12.1f\n" "$nodes" $((nodes * 8)) "$ps" "$ws" "$(awk -v k="$m" 'BEGIN{print k/1024}')"
	pts="$pts $nodes:$ps"
done
fit "whole platform load time" $pts

# issue 25 item 5: the plan search's screen per plan against the cluster
# size (512 to 16,384 GPUs)
echo
tests/bench/screen.sh "$build" "$runs"

# issue 40 item 3: a 10^6-point sweep streams its points: time to its
# first row and peak RSS over its first 20 s
tests/bench/sweep-stream.sh "$build" 20

# issue 42: several jobs on one fabric (each alone in a child, then
# together here): CPU of the whole command and its peak RSS
echo
printf "%-48s %10s %10s %12s\n" cluster wall_s cpu_s peak_rss_MB
for c in clusters/two-jobs-2to1-packed.json clusters/two-jobs-2to1-crossed.json; do
	/usr/bin/time -f "%e %M %U %S" -o "$out/t" "$bin" cluster "$c" --out "$out/cl" -q -j 1
	read -r t m u s < "$out/t"
	printf "%-48s %10s %10s %12.1f\n" "$c" "$t" "$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')" \
		"$(awk -v k="$m" 'BEGIN{print k/1024}')"
done

# issue 42: the engine's CPU per event (task + flow) against GPUs, every
# rank simulated: Llama 2 70B TP 8 x PP 4 at 64 to 4,096 GPUs of the
# 3-level fat tree (about 55 s, one run; tests/bench/scale.sh BUILD RUNS
# BASE pairs two builds)
echo
tests/bench/scale.sh "$build" 1

#!/usr/bin/env bash
# Benchmark, issue 40: a sweep of 10^6 points (axes training.global_batch
# 1..1000 x training.seq_len 1..1000 over the quickstart scenario) streams
# its points: the wall time to its first row and the peak RSS (of the sweep
# or of any one of its simulations: /usr/bin/time's maximum, which takes in
# the children it waited for) over its first SECONDS, then it is stopped
# (SIGTERM; the whole sweep would take days). Before the points streamed,
# it used 7.9 GB after 240 s without a row. Targets: first row within 5 s,
# under 200 MB. Usage: tests/bench/sweep-stream.sh [BUILD_DIR] [SECONDS]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
secs=${2:-20}
bin=$build/cli/ddlsim
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/s.json" <<EOF
{"schema": "ddlsim.sweep", "schema_version": "1.0", "name": "stream",
 "base": "$PWD/scenarios/quickstart.json",
 "axes": {"training.global_batch": "1..1000", "training.seq_len": "1..1000"}}
EOF
now() { date +%s.%N; }
t0=$(now)
/usr/bin/time -f "%M" -o "$out/t" "$bin" sweep "$out/s.json" --out "$out/o" --quiet 2>/dev/null &
pid=$!
first=-
while kill -0 "$pid" 2>/dev/null; do
	t=$(awk -v a="$(now)" -v b="$t0" 'BEGIN{print a - b}')
	if [ "$first" = - ] && [ -f "$out/o/points.csv" ] && [ "$(wc -l < "$out/o/points.csv")" -ge 2 ]; then
		first=$t
	fi
	if awk -v t="$t" -v s="$secs" 'BEGIN{exit !(t >= s)}'; then
		pkill -TERM -P "$pid" || true   # ddlsim, the child of time
		break
	fi
	sleep 0.05
done
wait "$pid" || true
rows=$(($(wc -l < "$out/o/points.csv") - 1))
peak=$(tail -1 "$out/t")
printf "\n%-40s %14s %10s %12s\n" "sweep (streamed points)" first_row_s rows peak_rss_MB
printf "%-40s %14s %10d %12.1f\n" "10^6 points, first ${secs} s" "$first" "$rows" "$(awk -v k="$peak" 'BEGIN{print k/1024}')"

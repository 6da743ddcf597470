#!/bin/bash
# nudt's CUDA backend beside cuFINUFFT on the same GPU, in one run: nudt's `cuda_bench` and
# cuFINUFFT's own perftest (`cuperftest`) on the same problems, then one table of set-points,
# execute, their sum and the ratio to cuFINUFFT's best method, with device memory.
#
#   benches/gpu_compare.sh CUDA_BENCH PEER OUTDIR [--quick]
#
# CUDA_BENCH  nudt's benchmark binary:
#             cargo build --release --no-default-features --features cuda --example cuda_bench
# PEER        cuFINUFFT's perftest (perftest/cuda/cuperftest.cu of flatironinstitute/finufft)
#             built from its source for this GPU: either the binary, or a folder holding the
#             source and a `cufinufft.sh` whose `build` verb builds it and prints
#             "built PATH" last. This repository neither holds nor builds peer code.
# OUTDIR      where the logs, CSVs and the table (compare.md) go.
# --quick     a tenth of the points (the problem names keep their full sizes).
# ONLY=TEXT   (environment) only the problems whose names contain TEXT.
#
# Timing: nudt's set-points are the first call on a fresh plan made after an earlier plan of
# the same size was dropped (its buffers come from the memory the pool kept: any later plan of
# a process; the median of three such plans), beside it the first call on a plan made with the pool emptied (it maps its
# buffers, as the first plan of a process does) and the median of three more on one plan; its execute is the mean
# of 5 (device arrays in and out, CUDA events). cuFINUFFT's are its perftest's means of 5
# runs, each on a fresh plan (its own protocol), for every method; "best" is the method with
# the smallest set-points + execute. The ratio is nudt's (fresh set-points + execute with its
# automatic method) over cuFINUFFT's best. Memory: "plan" is the device memory nudt's plan
# holds (free memory before the plan minus after its set-points and execute); "process" is the
# device's used memory while the plan lives, minus the idle GPU's and minus the input and
# output arrays the benchmark holds, so CUDA context, libraries and plan: for nudt read after
# set-points and after execute, for cuFINUFFT the peak of nvidia-smi samples every 5 ms.
set -euo pipefail
BENCH=$1
PERF=$2
OUT=$3
QUICK=${4:-}
mkdir -p "$OUT"
if [ -d "$PERF" ]; then
  echo "== building cuFINUFFT's perftest with $PERF/cufinufft.sh" >&2
  "$PERF/cufinufft.sh" build > "$OUT/cufinufft_build.log" 2>&1 || { tail -20 "$OUT/cufinufft_build.log" >&2; exit 1; }
  PERF=$(tail -1 "$OUT/cufinufft_build.log" | sed -n 's/^built //p')
fi
div=1
[ "$QUICK" = "--quick" ] && div=10

# name | precision | type | N1 N2 N3 | M | tol | methods
ROWS=(
  "1D t1 N=1e6 M=1e7 f32 1e-6|f|1|1000000 1 1|10000000|1e-6|1 2"
  "1D t1 N=1e6 M=1e7 f64 1e-6|d|1|1000000 1 1|10000000|1e-6|1 2"
  "2D t1 1000² M=1e7 f64 1e-6|d|1|1000 1000 1|10000000|1e-6|1 2 3"
  "2D t2 1000² M=1e7 f64 1e-6|d|2|1000 1000 1|10000000|1e-6|1 2"
  "2D t1 1000² M=1e7 f32 1e-5|f|1|1000 1000 1|10000000|1e-5|1 2 3"
  "3D t1 100³ M=1e7 f64 1e-6|d|1|100 100 100|10000000|1e-6|1 2 3 4"
  "3D t2 100³ M=1e7 f64 1e-6|d|2|100 100 100|10000000|1e-6|1 2"
  "3D t1 100³ M=1e7 f32 1e-5|f|1|100 100 100|10000000|1e-5|1 2 3 4"
  "3D t2 100³ M=1e7 f32 1e-5|f|2|100 100 100|10000000|1e-5|1 2"
  "3D t1 256³ M=1e8 f32 1e-5|f|1|256 256 256|100000000|1e-5|1 2 3 4"
  "2D t3 M=1e6 → 1e6 f64 1e-6|d|3|1000 1000 1|1000000|1e-6|1 2 3"
  "3D t3 M=1e6 → 1e6 f64 1e-6|d|3|100 100 100|1000000|1e-6|1 2 3"
)

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt"
idle=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)

echo "== nudt cuda_bench" >&2
bargs=(--csv "$OUT/nudt.csv" --out "$OUT/nudt.md")
[ -n "$QUICK" ] && bargs+=(--quick)
[ -n "${ONLY:-}" ] && bargs+=(--only "$ONLY")
"$BENCH" "${bargs[@]}" 2> "$OUT/nudt.log" > /dev/null || { tail -20 "$OUT/nudt.log" >&2; exit 1; }

echo "== cuFINUFFT cuperftest" >&2
echo "problem,method,setpts_ms,exec_ms,peak_used_mib" > "$OUT/cufinufft.csv"
for row in "${ROWS[@]}"; do
  IFS='|' read -r name prec ty sizes m tol methods <<< "$row"
  [[ -n "${ONLY:-}" && "$name" != *"$ONLY"* ]] && continue
  read -r n1 n2 n3 <<< "$sizes"
  m=$((m / div))
  # Type 3: N1·N2·N3 targets; the quick variant keeps the same tenth of them.
  if [ "$ty" = 3 ] && [ "$div" != 1 ]; then
    case "$n3" in 1) n1=$((n1 * 100 / 316)); n2=$((n2 * 100 / 316)) ;;
                  *) n1=$((n1 * 100 / 215)); n2=$((n2 * 100 / 215)); n3=$((n3 * 100 / 215)) ;; esac
  fi
  for meth in $methods; do
    log="$OUT/cuperftest_log.txt"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 5 > "$OUT/mem.tmp" &
    smi=$!
    echo "## $name method $meth" >> "$log"
    if "$PERF" --prec "$prec" --type "$ty" --N1 "$n1" --N2 "$n2" --N3 "$n3" --M "$m" \
         --tol "$tol" --method "$meth" --n_runs 5 > "$OUT/run.tmp" 2>&1; then
      ok=1
    else
      ok=0
    fi
    kill "$smi"; wait "$smi" 2>/dev/null || true
    cat "$OUT/run.tmp" >> "$log"
    peak=$(sort -n "$OUT/mem.tmp" | tail -1)
    if [ "$ok" = 1 ]; then
      sp=$(awk -F, '$1=="setpts"{print $4}' "$OUT/run.tmp")
      ex=$(awk -F, '$1=="execute"{print $4}' "$OUT/run.tmp")
      [ -n "$sp" ] && [ -n "$ex" ] && echo "$name,$meth,$sp,$ex,$peak" >> "$OUT/cufinufft.csv"
    fi
  done
done
rm -f "$OUT/mem.tmp" "$OUT/run.tmp"

python3 - "$OUT" "$div" "$idle" <<'EOF'
import csv, sys
out, div, idle = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
nudt = list(csv.DictReader(open(f"{out}/nudt.csv")))
peer = list(csv.DictReader(open(f"{out}/cufinufft.csv")))
names = {"1": "GM", "2": "SM", "3": "OD", "4": "BG"}
# (modes or targets N, points M, dimension) of each problem, for the arrays both programs hold
# on the device besides the plan: cuFINUFFT's perftest x, y, z (M each, whatever the
# dimension), strengths (M complex), modes (N complex) and for type 3 s, t, u (N each);
# nudt's cuda_bench one coordinate array per dimension, strengths, modes and type 3 targets.
sizes = {
    "1D t1 N=1e6": (1e6, 1e7, 1), "2D t1 1000²": (1e6, 1e7, 2), "2D t2 1000²": (1e6, 1e7, 2),
    "3D t1 100³": (1e6, 1e7, 3), "3D t2 100³": (1e6, 1e7, 3), "3D t1 256³": (256**3, 1e8, 3),
    "2D t3 M=1e6": (1e6, 1e6, 2), "3D t3 M=1e6": (1e6, 1e6, 3),
}
def data_mib(name, ours):
    n, m, dim = next(v for k, v in sizes.items() if name.startswith(k))
    n, m = n / div, m / div
    t = 4 if "f32" in name else 8
    t3 = " t3 " in name
    coords = (dim * m + (dim * n if t3 else 0)) if ours else (3 * m + (3 * n if t3 else 0))
    return (coords * t + 2 * m * t + 2 * n * t) / 2**20
rows = []
print_rows = []
for name in dict.fromkeys(r["problem"] for r in peer):
    auto = next((r for r in nudt if r["problem"] == name and r["method"].startswith("auto")), None)
    ours = [r for r in nudt if r["problem"] == name and not r["method"].startswith("gaussian")]
    theirs = [r for r in peer if r["problem"] == name]
    if auto is None or not theirs:
        continue
    best = min(theirs, key=lambda r: float(r["setpts_ms"]) + float(r["exec_ms"]))
    bex = min(theirs, key=lambda r: float(r["exec_ms"]))
    ns, nsa, ne = float(auto["setpts_first_ms"]), float(auto["setpts_ms"]), float(auto["exec_ms"])
    nsc = float(auto["setpts_cold_ms"])
    nbest = min(ours, key=lambda r: float(r["exec_ms"]))
    cs, ce = float(best["setpts_ms"]), float(best["exec_ms"])
    peer_mib = float(best["peak_used_mib"]) - idle - data_mib(name, False)
    our_mib = float(auto["used_mib"]) - idle - data_mib(name, True)
    rows.append(
        f"| {name} | {nsc:.3f} / {ns:.3f} / {nsa:.3f} | {ne:.3f} ({auto['method'][6:-1]}) | "
        f"{float(nbest['exec_ms']):.3f} ({nbest['method'].replace('auto (', '').rstrip(')')}) | "
        f"{ns + ne:.3f} | {cs:.3f} | {float(bex['exec_ms']):.3f} ({names[bex['method']]}) | "
        f"{cs + ce:.3f} ({names[best['method']]}) | {(ns + ne) / (cs + ce):.2f} | "
        f"{float(auto['err']):.1e} | {float(auto['plan_mib']):.0f} | {our_mib:.0f} | {peer_mib:.0f} |"
    )
gpu = open(f"{out}/gpu.txt").read().strip()
table = (
    f"GPU: {gpu}\n\n"
    "| problem | nudt setpts ms (cold / fresh / again) | nudt exec ms (auto) | nudt best exec ms | "
    "nudt total ms | cuFINUFFT setpts ms | cuFINUFFT best exec ms | cuFINUFFT best total ms | "
    "total nudt / cuFINUFFT | nudt rel. error | nudt plan MiB | nudt process MiB | "
    "cuFINUFFT process MiB (sampled) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
)
open(f"{out}/compare.md", "w").write(table)
print(table)
EOF

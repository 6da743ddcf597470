#!/bin/bash
# nudt's CUDA backend beside cuFINUFFT on the same GPU, in one run: a wrapper over
#
#   nudt bench --backend cuda --compare cufinufft --peer-bin PEER [--quick] [--only NAMES]
#
# which runs the GPU problem set (benches/gpu_problems.toml) on nudt and through cuFINUFFT's own
# perftest, every method, and prints one table of set-points, execute, their sum and the ratio
# to cuFINUFFT's best method, with device memory (`nudt bench --help` says how each is timed).
#
#   benches/gpu_compare.sh NUDT PEER OUTDIR [--quick]
#
# NUDT     the nudt binary of a CUDA build: cargo build --release --features cuda
# PEER     cuFINUFFT's perftest (perftest/cuda/cuperftest.cu of flatironinstitute/finufft)
#          built from its source for this GPU: either the binary, or a folder holding the
#          source and a `cufinufft.sh` whose `build` verb builds it and prints "built PATH"
#          last. This repository neither holds nor builds peer code.
# OUTDIR   where the table goes (compare.txt; `nudt bench ... --json` gives JSON lines).
# --quick  a tenth of the points.
# ONLY=NAMES (environment) only these problems (comma-separated names).
set -euo pipefail
NUDT=$1
PEER=$2
OUT=$3
mkdir -p "$OUT"
args=(bench --backend cuda --compare cufinufft --peer-bin "$PEER")
[ "${4:-}" = "--quick" ] && args+=(--quick)
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
"$NUDT" "${args[@]}" | tee "$OUT/compare.txt"

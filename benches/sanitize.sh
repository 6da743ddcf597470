#!/usr/bin/env bash
# compute-sanitizer over real CUDA workloads (issue 43): memcheck, racecheck, initcheck and
# synccheck, each with --error-exitcode 1, its log and one summary line per run in OUT.
#
#   benches/sanitize.sh NUDT SUITE OUT
#
# NUDT: a `nudt` binary built with --all-features; SUITE: the runtime's test suite binary
# (`cargo test --workspace --release --all-features --no-run` prints it). Workloads:
#   soak   `nudt bench --soak --backend cuda --cycles C`: the 24 soak shapes (types 1-3,
#          1-3 D, f32 and f64) once in the warm-up, then C cycles drawn from them;
#   suite  the runtime suite's `faults::` (every device call of every stage failed in turn),
#          `per_transform::` and `gradients::` tests (CPU and CUDA; OpenCL where present),
#          under memcheck one sanitizer process per module, side by side: the sanitizer's
#          cost is mostly host-side (patching each module loaded, checking each launch), which
#          one process does on one core at a time; in one process the three modules did not
#          finish in 290 s, side by side faults:: and per_transform:: took 51 s and 39 s.
# Time limits per run come from the environment (seconds): WARM, MEMCHECK, MEMCHECK_SUITE,
# INITCHECK, RACECHECK, SYNCCHECK. The first, unsanitised, pass compiles every module once into
# NUDT_CUDA_CACHE, which the sanitised runs then read (on a fresh H200 the soak's compiles
# took more than 95 s; the suite under memcheck more than 65 s).
set -u
nudt=$1 suite=$2 out=$3
mkdir -p "$out"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
export NUDT_REQUIRE_GPU=1 NCCL_NVLS_ENABLE=0
export NUDT_CUDA_CACHE=${NUDT_CUDA_CACHE:-$out/cuda-cache}
mkdir -p "$NUDT_CUDA_CACHE"
summary=$out/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$cs" --version | tail -1; } >"$summary" 2>&1

soak=("$nudt" bench --soak --backend cuda --cycles)
modules=(faults per_transform gradients)
tests=("$suite" --test-threads=4 --nocapture "${modules[@]/%/::}")

# run NAME LIMIT TOOL|plain CMD...: one run, its output in OUT/NAME.log, a line in summary.
run() {
    local name=$1 limit=$2 tool=$3
    shift 3
    local t0=$SECONDS rc
    if [ "$tool" = plain ]; then
        timeout -s INT -k 10 "$limit" "$@" >"$out/$name.log" 2>&1
    else
        timeout -s INT -k 10 "$limit" "$cs" --tool "$tool" --error-exitcode 1 --log-file "$out/$name.san" "$@" \
            >"$out/$name.log" 2>&1
    fi
    rc=$?
    local line
    line=$(grep -h "SUMMARY" "$out/$name.san" 2>/dev/null | tail -1)
    echo "$name: rc $rc, $((SECONDS - t0)) s${line:+, $line}" >>"$summary"
    tail -3 "$out/$name.log" >>"$summary"
}

run warm-soak "${WARM:-240}" plain "${soak[@]}" 48
run warm-suite "${WARM:-240}" plain "${tests[@]}"
run memcheck-soak "${MEMCHECK:-60}" memcheck "${soak[@]}" 48
for m in "${modules[@]}"; do
    run "memcheck-$m" "${MEMCHECK_SUITE:-400}" memcheck "$suite" --test-threads=6 --nocapture "$m::" &
done
wait
run initcheck-soak "${INITCHECK:-40}" initcheck "${soak[@]}" 48
run racecheck-soak "${RACECHECK:-35}" racecheck "${soak[@]}" 12
run synccheck-soak "${SYNCCHECK:-20}" synccheck "${soak[@]}" 12
cat "$summary"

#!/usr/bin/env bash
# nudt's Python GPU benchmarks on a machine with an NVIDIA GPU and no network (Python 3.12
# with numpy and CuPy; PyTorch optional), from packages carried in a folder CARRY (made by
# python/benches/gpu_carry.sh):
#   CARRY/nudt-*.whl                 the nudt wheel (python/README.md builds it)
#   CARRY/wheels/*.whl               mri-nufft 1.5.1, finufft, matplotlib and its needs,
#                                    tqdm, packaging (each installed only where missing;
#                                    scipy must be there), and pytest<8 with pytest-cases for
#                                    the upstream suite
#   CARRY/cufinufft-*.tar.gz         cuFINUFFT's source distribution (PyPI's cufinufft wheel
#                                    is 115 MB and needs CUDA 12's libcufft.so.11): built
#                                    here with nvcc for this GPU's architecture against the
#                                    local CUDA toolkit, unless CARRY/libcufinufft.so.xz (a
#                                    build this script wrote to $OUT before) is there
#   CARRY/mri_nufft-1.5.1.tar.gz     mri-nufft's sdist, for its own tests (stage upstream)
#
# Usage, from the repository root:  bash python/benches/gpu_python_benches.sh CARRY [STAGE...]
# Stages (default: overhead compare): overhead  python/benches/cuda_overhead.py (nudt.cuda
# against the runtime's own times, 10^6 points); compare  python/benches/mrinufft_compare.py
# --pairs $PAIRS (default gpu: "nudt-cuda" against mri-nufft's "cufinufft"; cpu,gpu adds
# "nudt" against "finufft" on the host's cores), after building cuFINUFFT;
# upstream  mri-nufft's operator tests on "nudt-cuda" (python/tests/mrinufft_upstream).
# Results (tables, JSON, the log) go to $OUT (./gpu-bench-out without it). Each stage's
# failure is reported and the next runs; the exit status is that of the last failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
CARRY=$(cd "${1:?usage: $0 CARRY [STAGE...]}" && pwd)
shift
STAGES=${*:-overhead compare}
OUT=${OUT:-$PWD/gpu-bench-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
T=/tmp/nudt-gpu-py
rm -rf "$T" && mkdir -p "$T/site"
status=0
stamp() { echo "== $(date +%T) $*"; }

stamp "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
$PY -c "import sys, numpy, cupy; print('Python', sys.version.split()[0], 'numpy', numpy.__version__, 'CuPy', cupy.__version__)"
$PY -c "import torch; print('PyTorch', torch.__version__)" || true

stamp "install (pip --no-index --target $T/site)"
pkgs=("$CARRY"/nudt-*.whl "$CARRY"/wheels/mri_nufft-*.whl "$CARRY"/wheels/finufft-*.whl)
$PY -c "import scipy" || { echo "scipy is missing (mri-nufft needs it)"; exit 1; }
# Only what the machine lacks (import name:wheel name).
for m in tqdm:tqdm packaging:packaging matplotlib:matplotlib contourpy:contourpy \
         cycler:cycler fontTools:fonttools kiwisolver:kiwisolver pyparsing:pyparsing \
         dateutil:python_dateutil six:six PIL:pillow; do
    $PY -c "import ${m%%:*}" 2>/dev/null || pkgs+=("$CARRY"/wheels/"${m#*:}"-*.whl)
done
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$T/site" \
    "${pkgs[@]}" || { echo "install failed"; exit 1; }
export PYTHONPATH=$T/site${PYTHONPATH:+:$PYTHONPATH}
$PY -c "import nudt, nudt.cuda, nudt.mrinufft, mrinufft; print('nudt', nudt.__version__, '- nudt-cuda available:', nudt.mrinufft.MRInudtCuda.available)" \
    || { echo "nudt.cuda does not import"; exit 1; }

cufinufft() {
    # cuFINUFFT's Python package with a libcufinufft.so for this GPU, into $T/site. Built
    # with nvcc directly: its CMake fetches CPM.cmake and CCCL from GitHub, which the GPU
    # machines cannot reach (the toolkit's own Thrust and CUB serve).
    local src cap o pids=() cuda=${CUDA_HOME:-/usr/local/cuda}
    tar xzf "$CARRY"/cufinufft-*.tar.gz -C "$T" && src=$(echo "$T"/cufinufft-*) || return 1
    cp -r "$src/python/cufinufft/cufinufft" "$T/site/" || return 1
    if [ -f "$CARRY/libcufinufft.so.xz" ]; then
        xz -dc "$CARRY/libcufinufft.so.xz" > "$T/site/cufinufft/libcufinufft.so" || return 1
    else
        cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
        echo "CUDA $("$cuda/bin/nvcc" --version | tail -1); sm_$cap"
        o=$T/cufinufft-obj && mkdir -p "$o"
        local fl=(-O3 -std=c++17 -arch="sm_$cap" -rdc=true --extended-lambda
                  --extra-device-vectorization -DNDEBUG -DFINUFFT_DLL -Xcompiler -fPIC
                  -Wno-deprecated-declarations -I"$src/include" -I"$src/contrib")
        for f in "$src"/src/cuda/*.cu "$src"/src/cuda/[123]d/*.cu; do
            "$cuda/bin/nvcc" "${fl[@]}" -c "$f" -o "$o/$(basename "$(dirname "$f")")_$(basename "$f").o" &
            pids+=($!)
        done
        "$cuda/bin/nvcc" "${fl[@]}" -x cu -c "$src/src/cuda/spreadinterp.cpp" -o "$o/spreadinterp.o" &
        pids+=($!)
        for f in "$src"/src/common/*.cpp; do
            g++ -O3 -std=c++17 -fPIC -DFINUFFT_DLL -I"$src/include" -c "$f" -o "$o/common_$(basename "$f").o" &
            pids+=($!)
        done
        for p in "${pids[@]}"; do wait "$p" || return 1; done
        "$cuda/bin/nvcc" -shared -arch="sm_$cap" -rdc=true -o "$T/site/cufinufft/libcufinufft.so" \
            "$o"/*.o -lcufft -lcudart || return 1
        # Kept for the next run (carry it back as CARRY/libcufinufft.so.xz).
        xz -T0 -6 -c "$T/site/cufinufft/libcufinufft.so" > "$OUT/libcufinufft.so.xz"
        [ "$(stat -c %s "$OUT/libcufinufft.so.xz")" -lt 16000000 ] || rm -f "$OUT/libcufinufft.so.xz"
    fi
    $PY -c "import cufinufft; print('cufinufft', cufinufft.__version__, 'imports')"
}

for stage in $STAGES; do
    case $stage in
    overhead)
        stamp "(b) nudt.cuda against the runtime's own times"
        $PY python/benches/cuda_overhead.py --json "$OUT/cuda_overhead.json" \
            | tee "$OUT/cuda_overhead.md" || status=$?
        ;;
    compare)
        stamp "cuFINUFFT for mri-nufft's cufinufft backend"
        (time cufinufft) || echo "cuFINUFFT not available: nudt-cuda is timed alone"
        stamp "(c) nudt-cuda against cufinufft through mri-nufft"
        $PY python/benches/mrinufft_compare.py --pairs "${PAIRS:-gpu}" \
            --json "$OUT/mrinufft_compare.json" | tee "$OUT/mrinufft_compare.md" || status=$?
        ;;
    upstream)
        stamp "mri-nufft's operator tests on nudt-cuda"
        # The stacked operator's tests (test_stacked_gpu.py) build on cufinufft's operator, and
        # their conftest marks every backend not named by --backend unavailable: cufinufft is
        # installed and named too (the plugin still keeps nudt-cuda's cases only).
        cufinufft || echo "cuFINUFFT not available: the stacked GPU tests will error"
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --target "$T/test-site" "$CARRY"/wheels/{pytest,pytest_cases,makefun,decopatch,iniconfig,pluggy}-*.whl
        # The machine's own pytest plugins (pytest-timeout on the GPU machines' image) may not
        # load into pytest 7: only pytest-cases is loaded.
        PYTHONPATH=$T/test-site:$PYTHONPATH PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout 500 \
            $PY python/tests/mrinufft_upstream/run.py --backend nudt-cuda \
            --sdist "$CARRY"/mri_nufft-1.5.1.tar.gz -- -rfEs -p pytest_cases.plugin --backend cufinufft \
            > "$OUT/upstream_nudt_cuda.txt" 2>&1 || status=$?
        tail -5 "$OUT/upstream_nudt_cuda.txt"
        ;;
    *) echo "unknown stage $stage"; status=2 ;;
    esac
done
stamp "done (status $status)"
exit $status

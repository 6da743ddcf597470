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
#                                    here for this GPU's architecture against the local
#                                    CUDA toolkit, unless CARRY/libcufinufft.so.xz (a build
#                                    this script wrote to $OUT before) is there
#   CARRY/cpm/cpm/CPM_0.42.0.cmake   CPM.cmake, which cuFINUFFT's CMake would download
#   CARRY/mri_nufft-1.5.1.tar.gz     mri-nufft's sdist, for its own tests (stage upstream)
#
# Usage, from the repository root:  bash python/benches/gpu_python_benches.sh CARRY [STAGE...]
# Stages (default: overhead compare): overhead  python/benches/cuda_overhead.py (nudt.cuda
# against the runtime's own times, 10^6 points); compare  python/benches/mrinufft_compare.py
# --pairs gpu ("nudt-cuda" against mri-nufft's "cufinufft"), after building cuFINUFFT;
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
    # cuFINUFFT's Python package with a libcufinufft.so for this GPU, into $T/site.
    local src so cap cccl vh v cuda=${CUDA_HOME:-/usr/local/cuda}
    tar xzf "$CARRY"/cufinufft-*.tar.gz -C "$T" && src=$(echo "$T"/cufinufft-*/) || return 1
    cp -r "$src/python/cufinufft/cufinufft" "$T/site/" || return 1
    if [ -f "$CARRY/libcufinufft.so.xz" ]; then
        xz -dc "$CARRY/libcufinufft.so.xz" > "$T/site/cufinufft/libcufinufft.so" || return 1
    else
        cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
        # CPM would clone CCCL; the toolkit's own is found instead (its version asked for).
        vh=$(find -L "$cuda/include" -path '*cuda/std/__cccl/version.h' | head -1)
        v=$(awk '/#define CCCL_VERSION /{print $3}' "$vh")
        cccl=$((v / 1000000)).$(((v / 1000) % 1000)).$((v % 1000))
        echo "CUDA $("$cuda/bin/nvcc" --version | tail -1); CCCL $cccl; sm_$cap"
        cmake -S "$src" -B "$T/cufinufft-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" -DCMAKE_PREFIX_PATH="$cuda" \
            -DFINUFFT_USE_CUDA=ON -DFINUFFT_USE_CPU=OFF -DFINUFFT_STATIC_LINKING=OFF \
            -DFINUFFT_ARCH_FLAGS= -DCMAKE_CUDA_ARCHITECTURES="$cap" \
            -DCPM_SOURCE_CACHE="$CARRY/cpm" -DCPM_USE_LOCAL_PACKAGES=ON \
            -DCUDA12_CCCL_VERSION="$cccl" >"$T/cmake.log" 2>&1 \
            || { tail -40 "$T/cmake.log"; return 1; }
        timeout "${CUFINUFFT_BUILD_S:-330}" cmake --build "$T/cufinufft-build" \
            --target cufinufft -j "$(nproc)" >"$T/build.log" 2>&1 \
            || { tail -40 "$T/build.log"; return 1; }
        so=$(find "$T/cufinufft-build" -name 'libcufinufft.so*' -type f | head -1)
        cp "$so" "$T/site/cufinufft/libcufinufft.so" || return 1
        # Kept for the next run (carry it back as CARRY/libcufinufft.so.xz).
        xz -T0 -6 -c "$so" > "$OUT/libcufinufft.so.xz"
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
        $PY python/benches/mrinufft_compare.py --pairs gpu \
            --json "$OUT/mrinufft_compare.json" | tee "$OUT/mrinufft_compare.md" || status=$?
        ;;
    upstream)
        stamp "mri-nufft's operator tests on nudt-cuda"
        $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
            --target "$T/test-site" "$CARRY"/wheels/{pytest,pytest_cases,makefun,decopatch,iniconfig,pluggy}-*.whl
        PYTHONPATH=$T/test-site:$PYTHONPATH timeout 500 $PY python/tests/mrinufft_upstream/run.py \
            --backend nudt-cuda --sdist "$CARRY"/mri_nufft-1.5.1.tar.gz -- -q \
            | tail -60 > "$OUT/upstream_nudt_cuda.txt" || status=$?
        tail -5 "$OUT/upstream_nudt_cuda.txt"
        ;;
    *) echo "unknown stage $stage"; status=2 ;;
    esac
done
stamp "done (status $status)"
exit $status

#!/usr/bin/env bash
# Fills CARRY (default gpu-bin/, git-ignored) with what python/benches/gpu_python_benches.sh
# installs on a GPU machine without network (x86-64, Python 3.12): the nudt wheel from
# NUDT_WHEEL (default: the newest python/dist/nudt-*.whl), wheels from PyPI, and the source
# distributions of cufinufft and mri-nufft. Prints the sizes. Usage, from the repository root:
#   bash python/benches/gpu_carry.sh [CARRY]
set -euo pipefail
cd "$(dirname "$0")/../.."
CARRY=${1:-gpu-bin}
mkdir -p "$CARRY/wheels"
wheel=${NUDT_WHEEL:-$(ls -t python/dist/nudt-*.whl | head -1)}
[ "$(realpath "$wheel")" = "$(realpath -m "$CARRY/$(basename "$wheel")")" ] || cp "$wheel" "$CARRY/"
pip=(python3 -m pip download -q --disable-pip-version-check --no-deps)
plat=(--only-binary=:all: --python-version 3.12 --implementation cp
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
# mri-nufft imports matplotlib and tqdm; scipy (35 MB) is left out: JAX, on the GPU
# machines' image, depends on it.
"${pip[@]}" "${plat[@]}" -d "$CARRY/wheels" 'mri-nufft==1.5.1' 'finufft==2.5.1' tqdm \
    packaging matplotlib contourpy cycler fonttools kiwisolver pyparsing python-dateutil six \
    pillow 'pytest<8' pytest-cases makefun decopatch iniconfig pluggy
"${pip[@]}" --no-binary cufinufft -d "$CARRY" 'cufinufft==2.5.1'
"${pip[@]}" --no-binary mri-nufft -d "$CARRY" 'mri-nufft==1.5.1'
find "$CARRY" -type f -printf '%s\t%p\n' | sort -n
echo "total: $(du -sb "$CARRY" | cut -f1) bytes; compressed (tar.gz): $(tar czf - -C "$(dirname "$CARRY")" "$(basename "$CARRY")" | wc -c) bytes"

#!/usr/bin/env python3
"""mri-nufft's own operator tests, run against nudt's mri-nufft backends.

Usage (in a Python environment with nudt, mri-nufft, finufft, pytest and pytest-cases):
    python3 python/tests/mrinufft_upstream/run.py [--backend nudt] [--sdist FILE]
        [--workdir DIR] [-- PYTEST ARGS...]

1. Gets the source distribution of the installed mri-nufft's version from PyPI with pip
   (``pip download --no-deps --no-binary mri-nufft mri-nufft==VERSION``; ``--sdist`` takes one
   already downloaded): mri-nufft's tests ship in it, none of them is kept in this repository.
2. Unpacks its ``tests/`` folder and ``pyproject.toml`` (their pytest settings) into
   ``--workdir`` (a temporary folder by default, removed afterwards).
3. Runs pytest on ``tests/operators`` with ``-p nudt_upstream_plugin`` (beside this file),
   which adds nudt's backends to mri-nufft's backend lists, keeps only their cases and skips
   the excluded ones (the plugin's ``EXCLUDED`` says which and why), with mri-nufft's
   ``--backend BACKEND --ref finufft``.

The exit status is pytest's: a failure or error of any nudt case fails; so does a run in
which no nudt case passed.
"""
import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))


def download(version, dest):
    """mri-nufft's sdist of ``version`` from PyPI into ``dest``; its path."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                    "--disable-pip-version-check", "--no-deps", "--no-binary", "mri-nufft",
                    f"mri-nufft=={version}", "-d", dest], check=True)
    names = [n for n in os.listdir(dest) if n.endswith((".tar.gz", ".zip"))]
    if len(names) != 1:
        sys.exit(f"run.py: expected one mri-nufft sdist in {dest}, found {names}")
    return os.path.join(dest, names[0])


def unpack(sdist, dest):
    """Extracts ``*/tests/**`` and ``*/pyproject.toml`` of ``sdist`` into ``dest``; returns
    the folder holding them."""
    with tarfile.open(sdist) as tar:
        members = []
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) == 2 and (parts[1] == "pyproject.toml"
                                    or parts[1].startswith("tests/")):
                if m.isfile() or m.isdir():
                    members.append(m)
        if not any(m.name.endswith("tests/conftest.py") for m in members):
            sys.exit(f"run.py: {sdist} has no tests/conftest.py")
        kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(dest, members=members, **kw)
    return os.path.join(dest, members[0].name.split("/", 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="nudt", choices=("nudt", "nudt-cuda"))
    ap.add_argument("--sdist", help="mri-nufft's sdist, already downloaded")
    ap.add_argument("--workdir", help="where to unpack (kept); a temporary folder otherwise")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = ap.parse_args()

    version = metadata.version("mri-nufft")
    with tempfile.TemporaryDirectory(prefix="mrinufft-upstream-") as tmp:
        work = args.workdir or tmp
        os.makedirs(work, exist_ok=True)
        sdist = args.sdist or download(version, os.path.join(work, "sdist"))
        src = unpack(sdist, work)
        print(f"mri-nufft {version}: tests of {os.path.basename(sdist)} in {src}", flush=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = HERE + (os.pathsep + env["PYTHONPATH"]
                                    if env.get("PYTHONPATH") else "")
        cmd = [sys.executable, "-m", "pytest", "-p", "nudt_upstream_plugin",
               "-p", "no:cacheprovider", "-q", "-rs", "--backend", args.backend,
               "--ref", "finufft", "tests/operators", *args.pytest_args]
        return subprocess.run(cmd, cwd=src, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())

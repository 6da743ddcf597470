"""cufinufft's Python interface on nudt's CUDA backend: not in this package yet.

The extension is built without the runtime's `cuda` feature, so importing this module
raises ImportError with the reason; on a GPU, nudt's CUDA backend is reached from Rust
(`nudt::cuda::CudaPlan`, README "On an NVIDIA GPU") or the CLI (`nudt transform --backend
cuda`).
"""

raise ImportError(
    "nudt.cuda: this nudt package is built without the CUDA backend (the Python package "
    "does not offer cufinufft's interface yet); nudt's CUDA backend is available from Rust "
    "(nudt::cuda::CudaPlan, cargo feature `cuda`) and `nudt transform --backend cuda`")

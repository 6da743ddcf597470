"""mri-nufft's operators on nudt: the backends ``"nudt"`` (CPU) and ``"nudt-cuda"`` (GPU).

mri-nufft (1.5) knows its backends by registration: every subclass of its
``FourierOperatorBase`` that names a ``backend`` is registered when it is defined, and
mri-nufft has no plugin discovery. Importing this module defines nudt's, so::

    import nudt.mrinufft  # registers "nudt", and "nudt-cuda" where nudt.cuda and CuPy work
    import mrinufft

    nufft = mrinufft.get_operator("nudt")(samples, shape=(256, 256), n_coils=8, smaps=smaps)
    kspace = nufft.op(image)
    image = nufft.adj_op(kspace)

Both run the forward (``op``: a type 2 transform, isign -1) and the adjoint (``adj_op``: type
1, isign +1) on one nudt plan, as its ``execute`` and ``execute_adjoint``: one plan and one
point sort where mri-nufft's finufft and cufinufft backends make two. Both run in float32 or
float64 as the samples are (mri-nufft's cufinufft backend casts new samples to float32).
Keyword arguments the operator does not take go to ``nudt.Plan`` or
``nudt.cuda.Plan`` (``eps``, default 1e-6, ``nthreads``, ``upsampfac``, ``gpu_method``...).

Density compensation takes an array or one of mri-nufft's geometric methods (``"voronoi"``,
``"cell_count"``...). ``density=True`` asks for the "pipe" method, which needs a spread-only
transform nudt does not offer, and raises mri-nufft's ValueError; so do gradients with
respect to the trajectory (``autograd_available`` is False).
"""

import functools
import warnings

import numpy as np
from mrinufft._array_compat import _array_to_numpy, with_numpy_cupy
from mrinufft._utils import proper_trajectory
from mrinufft.operators.base import FourierOperatorBase, FourierOperatorCPU, FourierOperatorSimple

from . import Plan

__all__ = ["MRInudt", "MRInudtCuda"]

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64),
            np.dtype(np.float64): np.dtype(np.complex128)}


def _trajectory(samples):
    """mri-nufft's samples (K, d), any of its normalisations, as float radians on the host,
    Fortran-ordered so that each coordinate (a column) is contiguous for setpts."""
    return np.asarray(_array_to_numpy(proper_trajectory(samples, normalize="pi")), order="F")


class _OnePlan:
    """mri-nufft's raw operator — ``op`` and ``adj_op`` of ``n_trans`` images at once, into
    the arrays mri-nufft gives — on one type 2 plan of ``plan_cls`` and its adjoint."""

    def __init__(self, plan_cls, samples, shape, n_trans, kwargs):
        dtype = _COMPLEX[np.dtype(samples.dtype)]
        self.plan = plan_cls(2, tuple(shape), n_trans, dtype=dtype, **kwargs)
        self.set_pts(samples)

    def set_pts(self, samples):
        self.plan.setpts(*(samples[:, i] for i in range(samples.shape[1])))

    @staticmethod
    def _into(run, data, out):
        # mri-nufft hands slices of C-ordered stacks; one that is not C-contiguous (an
        # image stack allocated like a Fortran-ordered input) gets the result by a copy.
        if out.flags.c_contiguous:
            run(data, out=out)
        else:
            out[...] = run(data).reshape(out.shape)

    def op(self, coeffs, image):
        """Images (n_trans, *shape) -> k-space (n_trans, K), into ``coeffs``."""
        self._into(self.plan.execute, image, coeffs)

    def adj_op(self, coeffs, image):
        """k-space (n_trans, K) -> images (n_trans, *shape), into ``image``."""
        self._into(self.plan.execute_adjoint, coeffs, image)


class MRInudt(FourierOperatorCPU):
    """mri-nufft's non-Cartesian MRI operator on nudt's CPU plans (backend ``"nudt"``).

    Arguments as mri-nufft's finufft backend's: ``samples`` (K, d), ``shape``, ``density``,
    ``n_coils``, ``n_batchs``, ``n_trans`` (transforms per plan call), ``smaps``,
    ``squeeze_dims``; the rest go to ``nudt.Plan``.
    """

    backend = "nudt"
    available = True
    autograd_available = False

    def __init__(self, samples, shape, density=False, n_coils=1, n_batchs=1, n_trans=1,
                 smaps=None, squeeze_dims=True, **kwargs):
        samples = _trajectory(samples)
        raw_op = _OnePlan(Plan, samples, shape, n_trans, kwargs)
        super().__init__(samples, shape, density, n_coils=n_coils, n_batchs=n_batchs,
                         n_trans=n_trans, smaps=smaps, raw_op=raw_op,
                         squeeze_dims=squeeze_dims)

    def update_samples(self, new_samples, *, unsafe=False):
        """New sample locations (K, d); with ``unsafe`` taken as they are (radians,
        Fortran-ordered). The density is recomputed as it was first computed."""
        self._samples = new_samples if unsafe else _trajectory(new_samples)
        self.raw_op.set_pts(self._samples)
        self.compute_density(self._density_method)


def _gpu():
    """(nudt.cuda, cupy), or None where either does not import (no GPU, driver or CuPy)."""
    try:
        import cupy
        from . import cuda
    except ImportError:
        return None
    return cuda, cupy


_GPU = _gpu()


def _on_gpu(fun):
    """``fun`` (working on CuPy arrays) for arrays anywhere: numpy arguments go to the GPU and
    the result comes back to the host; CuPy in, CuPy out (and torch tensors, through
    mri-nufft's own conversion, come back as tensors)."""
    cupy = _GPU[1]

    @functools.wraps(fun)
    def on_gpu(*args, **kwargs):
        host = any(isinstance(a, np.ndarray) for a in args)
        args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        kwargs = {k: cupy.asarray(v) if isinstance(v, np.ndarray) else v
                  for k, v in kwargs.items()}
        ret = fun(*args, **kwargs)
        return cupy.asnumpy(ret) if host else ret

    return with_numpy_cupy(on_gpu)


class MRInudtCuda(FourierOperatorSimple):
    """mri-nufft's non-Cartesian MRI operator on nudt's CUDA plans (backend
    ``"nudt-cuda"``): samples, density and smaps live on the GPU as CuPy arrays; ``op``,
    ``adj_op`` and ``data_consistency`` take host or device arrays and answer in kind.

    Arguments as :class:`MRInudt`'s; the rest go to ``nudt.cuda.Plan``
    (``gpu_method``, ``gpu_device_id``...).
    """

    backend = "nudt-cuda"
    available = _GPU is not None
    autograd_available = False

    def __init__(self, samples, shape, density=False, n_coils=1, n_batchs=1, n_trans=1,
                 smaps=None, squeeze_dims=True, **kwargs):
        if _GPU is None:
            raise RuntimeError("'nudt-cuda' backend is not available: nudt.cuda or CuPy "
                               "does not import (import nudt.cuda says why)")
        cuda, cupy = _GPU
        samples = cupy.asarray(_trajectory(samples), order="F")
        raw_op = _OnePlan(cuda.Plan, samples, shape, n_trans, kwargs)
        super().__init__(samples, shape, density, n_coils=n_coils, n_batchs=n_batchs,
                         n_trans=n_trans, smaps=smaps, raw_op=raw_op,
                         squeeze_dims=squeeze_dims)
        self.op = _on_gpu(self.op)
        self.adj_op = _on_gpu(self.adj_op)
        self.data_consistency = _on_gpu(self.data_consistency)

    def update_samples(self, new_samples, *, unsafe=False):
        """As :meth:`MRInudt.update_samples`, the samples kept on the GPU."""
        cupy = _GPU[1]
        self._samples = new_samples if unsafe else cupy.asarray(_trajectory(new_samples),
                                                                order="F")
        self.raw_op.set_pts(self._samples)
        self.compute_density(self._density_method)

    def compute_density(self, method=None):
        """mri-nufft's density methods compute on the host (Voronoi's is scipy's): they see
        the samples copied there, and the weights go to the GPU."""
        cupy = _GPU[1]
        on_device = self._samples
        if isinstance(on_device, cupy.ndarray):
            self._samples = cupy.asnumpy(on_device)
        try:
            super().compute_density(method)
        finally:
            self._samples = on_device
        if self._density is not None:
            self._density = _GPU[1].asarray(self._density, dtype=self.dtype)

    @FourierOperatorBase.smaps.setter
    def smaps(self, new_smaps):
        # mri-nufft's setter takes numpy arrays only; these are kept on the GPU.
        if new_smaps is None:
            self._smaps = None
            return
        new_smaps = _GPU[1].asarray(new_smaps, dtype=self.cpx_dtype)
        if new_smaps.shape[1:] != self._shape:
            raise ValueError("Smaps should match image shape.")
        if new_smaps.shape[0] != self._n_coils:
            self._n_coils = new_smaps.shape[0]
            warnings.warn("updating number of coils via Smaps.")
        self._smaps = new_smaps

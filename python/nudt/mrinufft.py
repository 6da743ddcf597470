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

Density compensation takes an array, one of mri-nufft's geometric methods (``"voronoi"``,
``"cell_count"``...) or ``density=True``: Pipe and Menon's fixed-point iteration ("pipe",
:meth:`MRInudt.pipe`), on nudt's spreading and interpolation without FFT or deconvolution.
Gradients with respect to the data or the trajectory through mri-nufft's autograd wrappers
raise mri-nufft's ValueError (``autograd_available`` is False; ``nudt.torch`` has
differentiable transforms).
"""

import functools
import warnings

import numpy as np
from mrinufft._array_compat import _array_to_numpy, with_numpy_cupy
from mrinufft._utils import proper_trajectory
from mrinufft.operators.base import FourierOperatorBase, FourierOperatorCPU, FourierOperatorSimple

from . import Plan, _nudt

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


def _pipe(samples, shape, max_iter, osf, normalize, kwargs):
    """Pipe and Menon's density weights (float, one per sample) on the host.

    With S the spreading of values at the samples onto nudt's fine grid (``osf`` times the
    image's shape, the transform's own kernel, no FFT and no deconvolution) and S* its
    adjoint, the interpolation back to the samples, the weights start at 1 and are divided
    ``max_iter`` times by |S* S w|: where samples crowd, their kernels overlap and the
    weights shrink. ``normalize`` scales them so that the image of a constant image, passed
    through the weighted operator (adjoint of the forward), has mean modulus 1.
    """
    traj = _trajectory(samples)
    dtype = _COMPLEX[np.dtype(traj.dtype)]
    if not 1.25 <= osf <= 2.5:
        raise ValueError(f"pipe density: osf must be between 1.25 and 2.5 (nudt's fine "
                         f"grids), got {osf}")
    eps, nthreads = kwargs.pop("eps", 1e-6), kwargs.pop("nthreads", 0)
    if kwargs:
        raise TypeError(f"pipe density: unexpected arguments {sorted(kwargs)}")
    # The runtime's plan directly: nudt.Plan takes finufft's upsampfac values only (2, 1.25).
    raw = _nudt.RawPlan(2, [int(n) for n in shape], -1, 1, eps, dtype == np.complex64,
                        False, nthreads, float(osf))
    raw.setpts([np.ascontiguousarray(traj[:, i]) for i in range(traj.shape[1])], [])
    kwargs = {"eps": eps, "nthreads": nthreads}
    weights = np.ones(len(traj), dtype=traj.dtype)
    for _ in range(max_iter):
        weights /= np.abs(raw.interp_only(raw.spread_only(weights.astype(dtype))))
    if normalize:
        op = MRInudt(traj, shape, **kwargs)
        back = op.adj_op(weights * op.op(np.ones(shape, dtype=dtype)))
        weights /= np.mean(np.abs(back))
    return weights


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

    @classmethod
    def pipe(cls, kspace_loc, volume_shape, max_iter=10, osf=2, normalize=True, **kwargs):
        """Density compensation weights of the samples ``kspace_loc`` (K, d) for an image
        of ``volume_shape``, by Pipe and Menon's fixed-point iteration (``max_iter``
        rounds) on a fine grid ``osf`` (1.25 to 2.5) times the image's size: mri-nufft's
        ``density=True`` and ``mrinufft.density.pipe(..., backend="nudt")``. The rest of
        the arguments go to ``nudt.Plan`` (``eps``, ``nthreads``). Returns float weights
        of the samples' precision (K,)."""
        return _pipe(kspace_loc, volume_shape, max_iter, osf, normalize, kwargs)

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

    @classmethod
    def pipe(cls, kspace_loc, volume_shape, max_iter=10, osf=2, normalize=True, **kwargs):
        """:meth:`MRInudt.pipe`, computed on the host (on the CPU plans; ``kwargs`` that
        only ``nudt.cuda.Plan`` takes are dropped): numpy weights, which the operator
        moves to the GPU."""
        kwargs = {k: v for k, v in kwargs.items() if k in ("eps", "nthreads")}
        samples = kspace_loc.get() if hasattr(kspace_loc, "get") else kspace_loc
        return _pipe(samples, volume_shape, max_iter, osf, normalize, kwargs)

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
        self.density = self._density  # to the GPU, by the setter below

    @FourierOperatorBase.density.setter
    def density(self, new_density):
        """Kept on the GPU, where ``adj_op`` weights the k-space with it: a host array
        assigned after construction (mri-nufft's update tests do) is copied over, as
        mri-nufft's cufinufft backend does."""
        if new_density is None:
            self._density = None
            return
        if len(new_density) != self.n_samples:
            raise ValueError("Density and samples should have the same length")
        self._density = _GPU[1].asarray(new_density, dtype=self.dtype)

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

"""Direct sums in float64 numpy: the reference every nudt result is checked against."""

import numpy as np


def mode_numbers(n, modeord=0):
    """Mode numbers of the indices of an axis of n modes: centred (-n//2 ...) or FFT order."""
    k = np.arange(n) - n // 2
    return np.fft.ifftshift(k) if modeord == 1 else k


def mode_grid(n_modes, modeord=0):
    """(prod(n_modes), d) mode vectors in C order of a mode array of shape n_modes."""
    axes = [mode_numbers(n, modeord) for n in n_modes]
    return np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)


def exp_matrix(freqs, pts, isign):
    """E[k, j] = exp(i isign freqs[k] . pts[:, j]); freqs (K, d), pts (d, M)."""
    phase = np.asarray(freqs, dtype=np.float64) @ np.asarray(pts, dtype=np.float64)
    return np.exp(1j * np.sign(isign) * phase)


def type1(pts, c, n_modes, isign, modeord=0):
    """f (n_modes) = sum_j c_j exp(i isign k . x_j)."""
    e = exp_matrix(mode_grid(n_modes, modeord), pts, isign)
    return (e @ np.asarray(c, dtype=np.complex128)).reshape(n_modes)


def type2(pts, f, isign, modeord=0):
    """c_j = sum_k f_k exp(i isign k . x_j)."""
    e = exp_matrix(mode_grid(f.shape, modeord), pts, isign)
    return e.T @ np.asarray(f, dtype=np.complex128).ravel()


def type3(pts, c, freqs, isign):
    """f_k = sum_j c_j exp(i isign s_k . x_j); freqs (d, N)."""
    e = exp_matrix(np.asarray(freqs).T, pts, isign)
    return e @ np.asarray(c, dtype=np.complex128)


def rel_err(approx, exact):
    approx, exact = np.asarray(approx).ravel(), np.asarray(exact).ravel()
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))

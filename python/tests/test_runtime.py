"""What the Python layer costs: no copies of contiguous input, the GIL released while the
runtime works, memory given back when a plan goes."""

import gc
import os
import threading
import time
import tracemalloc

import numpy as np
import pytest

import nudt


def test_contiguous_input_is_not_copied_and_other_input_is():
    """numpy reports its allocations to tracemalloc: executing on a C-contiguous 32 MB
    input into a given out allocates (almost) nothing in numpy; a strided input is
    copied once, with finufft's warning."""
    m = 2_000_000
    rng = np.random.default_rng(0)
    x = rng.uniform(-np.pi, np.pi, m)
    plan = nudt.Plan(1, (64,), eps=1e-6)
    plan.setpts(x)
    c = np.ones(m, dtype=np.complex128)
    out = np.empty(64, dtype=np.complex128)
    strided = np.ones(2 * m, dtype=np.complex128)[::2]

    def numpy_peak(data):
        tracemalloc.start()
        try:
            plan.execute(data, out=out)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert numpy_peak(c) < 1 << 20
    with pytest.warns(UserWarning, match="`data` does not satisfy the following requirement"):
        assert numpy_peak(strided) >= c.nbytes


def test_gil_released_during_setpts_and_execute():
    """A Python thread keeps counting while a long transform runs in another."""
    m = 3_000_000
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-np.pi, np.pi, (2, m))
    c = np.ones(m, dtype=np.complex128)
    plan = nudt.Plan(1, (256, 256), eps=1e-9, nthreads=1)
    count, stop = [0], threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1

    worker = threading.Thread(target=counter)
    worker.start()
    try:
        time.sleep(0.05)
        for step in (lambda: plan.setpts(x, y), lambda: plan.execute(c)):
            before = count[0]
            t0 = time.perf_counter()
            step()
            elapsed = time.perf_counter() - t0
            progressed = count[0] - before
            # Holding the GIL for the whole call would let the counter move only at the
            # interpreter's switch points around it: a handful of increments.
            assert elapsed > 0.02, "transform too quick to tell"
            assert progressed > 1000, (progressed, elapsed)
    finally:
        stop.set()
        worker.join()


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def type1_2d(modes, points, seed):
    """A 2-D type 1 plan of `modes` that has run once on `points` random points."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-np.pi, np.pi, (2, points))
    plan = nudt.Plan(1, modes, eps=1e-6)
    plan.setpts(x, y)
    plan.execute(np.ones(points, dtype=np.complex128))
    return plan


def test_a_dropped_plans_buffers_go_to_the_next_and_free_on_request():
    """A plan's fine grid outlives it in the runtime's cache (nudt.kept_work_bytes), the
    next plan of the size takes it, and nudt.free_kept_work empties the cache."""

    def plan():
        return type1_2d((200, 200), 10_000, 3)

    nudt.free_kept_work()
    assert nudt.kept_work_bytes() == 0
    p = plan()
    assert nudt.kept_work_bytes() == 0
    del p
    gc.collect()
    kept = nudt.kept_work_bytes()
    assert kept >= 200 * 200 * 16
    p = plan()
    assert nudt.kept_work_bytes() < kept
    del p
    gc.collect()
    assert nudt.kept_work_bytes() == kept
    nudt.free_kept_work()
    assert nudt.kept_work_bytes() == 0


def test_memory_given_back_when_plans_go():
    """Fine grid 2000 x 2000 complex128 (64 MB) per plan: ten plans one after another
    leave the resident size where one left it."""

    def one():
        plan = type1_2d((1000, 1000), 100_000, 2)
        del plan
        gc.collect()

    one()
    baseline = rss_bytes()
    for _ in range(10):
        one()
    assert rss_bytes() - baseline < 64 << 20

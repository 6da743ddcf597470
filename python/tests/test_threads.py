"""One plan shared by Python threads, as finufft allows: concurrent execute and
execute_adjoint calls never raise and each gives its own right answer (checked against
direct sums), and a setpts on one thread while others execute leaves each execute with one
point set or the other, never a mixture."""

import threading

import numpy as np
import pytest

import nudt
import nudt_direct as direct
from concurrency import THREADS, in_threads

M, MODES, NK = 2000, (24, 17), 300
EPS, BOUND = 1e-9, 1e-7


def points(seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (2, M)), rng.uniform(-15, 15, (2, NK))


def setpts(plan, tp, pts):
    x, s = pts
    if tp == 3:
        plan.setpts(*x, s=s[0], t=s[1])
    else:
        plan.setpts(*x)


def forward(tp, pts, data):
    """The direct sum of `execute` with isign -1 for type 2, +1 otherwise."""
    x, s = pts
    if tp == 1:
        return direct.type1(x, data, MODES, 1)
    if tp == 2:
        return direct.type2(x, data, -1)
    return direct.type3(x, data, s, 1)


def adjoint(tp, pts, data):
    """The direct sum of `execute_adjoint`."""
    x, s = pts
    if tp == 1:
        return direct.type2(x, data.reshape(MODES), -1)
    if tp == 2:
        return direct.type1(x, data, MODES, 1)
    return direct.type3(s, data, x, -1)


def inputs(tp, seed):
    """(execute's input, execute_adjoint's input) of one thread."""
    rng = np.random.default_rng(seed)
    shapes = {1: ((M,), MODES), 2: (MODES, (M,)), 3: ((M,), (NK,))}[tp]
    return [rng.standard_normal(sh) + 1j * rng.standard_normal(sh) for sh in shapes]


@pytest.mark.parametrize("tp", (1, 2, 3))
def test_threads_share_one_plan(tp):
    pts = points(tp)
    plan = nudt.Plan(tp, MODES if tp != 3 else 2, eps=EPS)
    setpts(plan, tp, pts)
    data = [inputs(tp, 100 + i) for i in range(THREADS)]
    want = [(forward(tp, pts, a), adjoint(tp, pts, b)) for a, b in data]
    rounds = 6

    def work(i):
        a, b = data[i]
        out = np.empty_like(want[i][0])
        for r in range(rounds):
            if r % 2:
                got = plan.execute_adjoint(b)
                assert direct.rel_err(got, want[i][1]) < BOUND
            else:
                # into a thread's own out, and into a new array
                got = plan.execute(a, out=out if r % 4 else None)
                assert direct.rel_err(got, want[i][0]) < BOUND

    in_threads(work)


@pytest.mark.parametrize("tp", (1, 3))
def test_setpts_while_others_execute(tp):
    """Two threads set one of two point sets (of one size) over and over while six execute:
    every result is the direct sum for one of the two sets."""
    sets = [points(10 + tp), points(20 + tp)]
    plan = nudt.Plan(tp, MODES if tp != 3 else 2, eps=EPS)
    setpts(plan, tp, sets[0])
    a, _ = inputs(tp, 7)
    want = [forward(tp, pts, a) for pts in sets]
    seen = [0, 0]

    def work(i):
        if i < 2:
            for r in range(10):
                setpts(plan, tp, sets[(i + r) % 2])
            return
        for _ in range(8):
            got = plan.execute(a)
            errs = [direct.rel_err(got, w) for w in want]
            assert min(errs) < BOUND, errs
            seen[int(np.argmin(errs))] += 1

    in_threads(work)
    assert sum(seen) == 6 * 8


def test_concurrent_calls_overlap_other_python_work():
    """While threads wait for the plan (and while it runs), the GIL is free: a pure-Python
    counter on another thread keeps counting."""
    plan = nudt.Plan(1, (256, 256), eps=1e-9)
    big = np.random.default_rng(0).uniform(-np.pi, np.pi, (2, 400_000))
    plan.setpts(*big)
    c = np.ones(400_000, np.complex128)
    stop, count = threading.Event(), [0]

    def counter():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        in_threads(lambda i: plan.execute(c), n=4)
    finally:
        stop.set()
        t.join()
    assert count[0] > 1000

//! The generated CUDA kernels, run on the CPU: each module is compiled as C++ with an
//! emulation header and driven through the same sequence the runtime launches — both bin
//! counts, the prefix sums of bins and subproblems, the scatter of point indices (and the
//! two-pass sort's bucket and place kernels), the
//! subproblem lists, GM-sort, SM and output-driven spreading, GM-sort and SM interpolation,
//! mode copies; then the same for a point set per transform (three sets, one empty, sorted
//! together and spread onto their own grids in two launches, a batch of sets each) — all
//! checked against direct
//! spreading/interpolation with the exact kernel.
//!
//! Blocks have the threads the module declares for each kernel, each a user-level context
//! (`ucontext`) with its own stack; a block's threads take turns, switching only inside
//! `__syncthreads` and the warp collectives (`__shfl_*_sync`, `__match_any_sync`), which see
//! every lane's value. So the warp-level scans, reductions and aggregated atomics run as
//! on a GPU, and a barrier some threads never reach, a collective whose lanes differ from its
//! mask, or a shuffle from a lane that did not take part fails the run. Blocks run one after
//! another, so `__shared__` variables are statics and atomics plain adds; dynamic shared
//! memory starts as garbage in every block. Races inside a block are not seen (the GPU suite's
//! racecheck covers them).
//!
//! This checks indexing, wrapping, bins, subproblems, batching strides, the warp-level code and
//! the baked Horner polynomials without a GPU; the GPU suite (tests/suite/cuda_gpu.rs) checks the
//! rest. Skips (and says so) where no C++ compiler is found.
//!
//! The common module gets a driver of its own (prefix sums over more bins than one pass,
//! bounding intervals over more points than one grid pass, type 3 factors and products), and
//! so does the wide-Gaussian module (Gaussian-gridding type 3): spreading with pre-phases,
//! pre-compensation, target factors and interpolation with post-factors, against direct
//! evaluation of the Gaussian in double.
//!
//! The widths 3, 13, 16 (spreading) and 45 (wide Gaussian) are long runs: with
//! `NUDT_LONG_TESTS=1` (CI) only; without it the test says so on stderr.

use nudt_gen::gpu::{
    common_module, gaussian_wide_module, spread_module, GpuSource, GpuSpreadSpec, OdBox,
    MINMAX_BLOCKS,
};
use nudt_gen::{KernelKind, KernelSpec, Precision, Upsampling};
use std::path::Path;
use std::process::Command;

mod long;

const HEADER: &str = r#"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <limits>
#include <algorithm>
#include <complex>
#include <functional>
#include <ucontext.h>
struct EmuDim { unsigned x, y, z; };
static EmuDim threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
// Blocks run one at a time, so a block's shared variables can be statics.
#define __shared__ static
#define __launch_bounds__(x)
#define __align__(n) __attribute__((aligned(n)))
struct alignas(8) float2 { float x, y; };
struct alignas(16) double2 { double x, y; };
struct alignas(8) uint2 { unsigned x, y; };
inline float2 make_float2(float a, float b) { float2 r; r.x = a; r.y = b; return r; }
inline double2 make_double2(double a, double b) { double2 r; r.x = a; r.y = b; return r; }
inline uint2 make_uint2(unsigned a, unsigned b) { uint2 r; r.x = a; r.y = b; return r; }
// Threads switch only at barriers and warp collectives, so a read-modify-write is atomic.
template <class V> V atomicAdd(V* p, V v) { V o = *p; *p = o + v; return o; }
inline unsigned atomicMin(unsigned* p, unsigned v) { unsigned o = *p; if (v < o) *p = v; return o; }
using std::isfinite;
inline unsigned atomicCAS(unsigned* p, unsigned cmp, unsigned v) { unsigned o = *p; if (o == cmp) *p = v; return o; }
inline void sincos(double x, double* s, double* c) { *s = std::sin(x); *c = std::cos(x); }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, sizeof d); return d; }
using std::min;
extern "C" { alignas(16) unsigned char smem_raw[1 << 22]; }

// ---- blocks of real threads -----------------------------------------------------------------
// Each CUDA thread of a block is a user-level context with its own stack; a scheduler runs
// them in turn, and a thread gives way only inside __syncthreads and the warp collectives, so
// a block runs its threads' code between barriers in some interleaving, as on a GPU, and the
// warp collectives see the values of all the warp's lanes. A barrier that some live threads
// never reach, a collective whose participants are not the mask it names, or a shuffle from a
// lane that did not take part fails the run.
namespace emu {
const size_t STACK = 64 << 10;
struct Thread { ucontext_t ctx; bool done; };
static ucontext_t sched;
static std::vector<Thread> th;
static char* stacks = nullptr;
static size_t stack_threads = 0;
static unsigned cur = 0, live = 0, bar_arrived = 0, bar_gen = 0;
static unsigned wlive[32], warr[32], wgen[32], wmask_in[32], wmask[32], wreq[32];
static unsigned long long progress = 0;
static unsigned char wslot[32][32][16];
static std::function<void()> body;
static size_t dyn_smem = 0;
[[noreturn]] static void fail(const char* what) {
    printf("FAIL %s (block %u,%u thread %u)\n", what, blockIdx.x, blockIdx.y, cur);
    exit(1);
}
static void yield() { swapcontext(&th[cur].ctx, &sched); }
static void release_block() { bar_arrived = 0; bar_gen++; progress++; }
static void release_warp(unsigned w) {
    if (wmask_in[w] != wreq[w]) fail("warp collective: participating lanes differ from its mask");
    wmask[w] = wmask_in[w]; wmask_in[w] = 0; warr[w] = 0; wgen[w]++; progress++;
}
// Waits until the live lanes of this thread's warp have all arrived.
static void warp_sync(unsigned mask) {
    const unsigned t = cur, w = t >> 5, g = wgen[w];
    if (warr[w] == 0) wreq[w] = mask;
    else if (wreq[w] != mask) fail("warp collective: lanes name different masks");
    wmask_in[w] |= 1u << (t & 31);
    if (++warr[w] == wlive[w]) { release_warp(w); return; }
    while (wgen[w] == g) yield();
}
static void entry() {
    body();
    const unsigned t = cur, w = t >> 5;
    th[t].done = true; live--; wlive[w]--; progress++;
    if (bar_arrived && bar_arrived == live) release_block();
    if (warr[w] && warr[w] == wlive[w]) release_warp(w);
}
template <class V> static V exchange(unsigned mask, V v, int src_lane, bool own) {
    static_assert(sizeof(V) <= 16, "shuffle of a wide type");
    const unsigned lane = cur & 31, w = cur >> 5;
    memcpy(wslot[w][lane], &v, sizeof v);
    warp_sync(mask);
    V r = v;
    if (!own) {
        if (!((wmask[w] >> src_lane) & 1)) fail("shuffle from a lane that did not take part");
        memcpy(&r, wslot[w][src_lane], sizeof r);
    }
    warp_sync(mask);
    return r;
}
} // namespace emu
inline void __syncthreads() {
    const unsigned g = emu::bar_gen;
    if (++emu::bar_arrived == emu::live) { emu::release_block(); return; }
    while (emu::bar_gen == g) emu::yield();
}
template <class V> V __shfl_sync(unsigned mask, V v, int src) { return emu::exchange(mask, v, src & 31, false); }
template <class V> V __shfl_up_sync(unsigned mask, V v, unsigned d) {
    const int s = (int)(threadIdx.x & 31) - (int)d;
    return emu::exchange(mask, v, s, s < 0);
}
template <class V> V __shfl_down_sync(unsigned mask, V v, unsigned d) {
    const int s = (int)(threadIdx.x & 31) + (int)d;
    return emu::exchange(mask, v, s, s > 31);
}
inline unsigned __match_any_sync(unsigned mask, unsigned v) {
    const unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    memcpy(emu::wslot[w][lane], &v, sizeof v);
    emu::warp_sync(mask);
    unsigned r = 0;
    for (unsigned l = 0; l < 32; l++) {
        unsigned u;
        memcpy(&u, emu::wslot[w][l], sizeof u);
        if (((emu::wmask[w] >> l) & 1) && u == v) r |= 1u << l;
    }
    emu::warp_sync(mask);
    return r;
}
// Runs f as a kernel of gx x gy blocks of `threads` threads, block after block; dynamic
// shared memory (`smem` bytes) starts as garbage in every block, as on a GPU.
template <class F> static void launch(unsigned gx, unsigned gy, unsigned threads, size_t smem, F f) {
    using namespace emu;
    if (threads == 0 || threads > 1024) fail("block size");
    if (threads > stack_threads) {
        free(stacks);
        stacks = (char*)malloc(threads * STACK);
        stack_threads = threads;
        th.resize(threads);
    }
    body = f;
    gridDim.x = gx; gridDim.y = gy; gridDim.z = 1;
    blockDim.x = threads; blockDim.y = 1; blockDim.z = 1;
    for (unsigned by = 0; by < gy; by++)
        for (unsigned bx = 0; bx < gx; bx++) {
            blockIdx.x = bx; blockIdx.y = by;
            memset(smem_raw, 0xa5, smem);
            live = threads; bar_arrived = 0;
            for (unsigned w = 0; w < 32; w++) {
                wlive[w] = w * 32 < threads ? std::min(32u, threads - w * 32) : 0;
                warr[w] = 0; wmask_in[w] = 0;
            }
            for (unsigned t = 0; t < threads; t++) {
                th[t].done = false;
                getcontext(&th[t].ctx);
                th[t].ctx.uc_stack.ss_sp = stacks + t * STACK;
                th[t].ctx.uc_stack.ss_size = STACK;
                th[t].ctx.uc_link = &sched;
                makecontext(&th[t].ctx, entry, 0);
            }
            while (live) {
                const unsigned long long before = progress;
                for (unsigned t = 0; t < threads; t++)
                    if (!th[t].done) { cur = t; threadIdx.x = t; swapcontext(&sched, &th[t].ctx); }
                if (live && progress == before) fail("deadlock: live threads wait at barriers that never complete");
            }
        }
}
// Launches kernel `name` with the block size and dynamic shared memory its module declares.
#define LAUNCH(name, gx, gy, ...) launch(gx, gy, THREADS_##name, SMEM_##name, [&] { name(__VA_ARGS__); })
// Blocks of a grid-stride launch over n items, as the runtime's `blocks`.
static unsigned blocks(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)std::min<size_t>(std::max<size_t>(b, 1), 1u << 20);
}
// The drivers' random numbers: xorshift64, uniform in [0, 1).
static unsigned long long rng_state = 88172645463325252ull;
static double urand() {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}
"#;

/// The bin sort's prefix sums, launched as the runtime launches them (tiles, their totals,
/// the offsets), for the drivers of modules compiled with the common module.
const SCAN_LAUNCH: &str = r#"
static void bin_scan(const std::vector<unsigned>& counts, unsigned maxsub, std::vector<unsigned>& start, std::vector<unsigned>& substart) {
    const unsigned nb = counts.size(), ntiles = std::max(1u, (nb + SCAN_TILE - 1) / SCAN_TILE);
    std::vector<uint2> tiles(ntiles, make_uint2(0xdeadbeefu, 0xdeadbeefu));
    LAUNCH(nudt_bin_scan_tiles, ntiles, 1, nb, counts.data(), maxsub, start.data(), substart.data(), tiles.data());
    unsigned nsub = 0xdeadbeefu;
    LAUNCH(nudt_bin_scan_totals, 1, 1, ntiles, tiles.data(), nb, start.data(), substart.data(), &nsub);
    if (nsub != substart[nb]) { printf("FAIL subproblem count %u, not %u\n", nsub, substart[nb]); exit(1); }
    if (ntiles > 1) LAUNCH(nudt_bin_scan_add, blocks(nb, THREADS_nudt_bin_scan_add), 1, nb, tiles.data(), start.data(), substart.data());
}
"#;

const DRIVER: &str = r#"
// ---- driver -------------------------------------------------------------------------------
static double phi(double z) {
    if (std::fabs(z) > 1.0) return 0.0;
    return KIND_ES ? std::exp(BETA * (std::sqrt(1.0 - z * z) - 1.0)) : std::exp(-BETA * z * z);
}
static std::vector<unsigned> scan(const std::vector<unsigned>& c, unsigned div) {
    std::vector<unsigned> s(c.size() + 1, 0);
    for (size_t i = 0; i < c.size(); i++) s[i + 1] = s[i] + (c[i] + div - 1) / div;
    return s;
}
// Cell of coordinate x on a grid of n: the index of the point's window centre, as the kernels'
// `locate` defines it (in double, from the coordinate in T).
static int cell_of(T x, int n) {
    double turns = (double)x * 0.15915494309189535;
    double xg = (turns - std::floor(turns)) * n;
    if (xg >= n) xg -= n;
    int c = (int)std::ceil(xg - 0.5 * W) + HALF;
    return c >= n ? c - n : c;
}
int main() {
    const int n[3] = {N0, N1, N2};
    const int nb[3] = {(N0 + B0 - 1) / B0, (N1 + B1 - 1) / B1, (N2 + B2 - 1) / B2};
    const unsigned nbins = nb[0] * nb[1] * nb[2];
    const int glen = n[0] * n[1] * n[2];
    const int ntr = 2;
    // One point set that the ntr transforms share.
    const unsigned one_set[2] = {0u, (unsigned)NPTS};
    const double pi = 3.14159265358979323846;
    std::vector<T> x[3];
    for (int d = 0; d < 3; d++) {
        x[d].resize(NPTS);
        for (int j = 0; j < NPTS; j++) x[d][j] = (T)((urand() * 6.0 - 3.0) * pi);
    }
    x[0][0] = (T)pi; x[0][1] = (T)(-pi);
    std::vector<T2> c(ntr * NPTS);
    for (auto& v : c) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    auto bin_of_point = [&](const T* xs) {
        unsigned b = 0;
        for (int d = 0; d < 3; d++) b = b * nb[d] + (d < DIM ? (unsigned)(cell_of(xs[d], n[d]) / (d == 0 ? B0 : d == 1 ? B1 : B2)) : 0u);
        return b;
    };
    std::vector<unsigned> want_counts(nbins, 0);
    for (int j = 0; j < NPTS; j++) {
        const T xs[3] = {x[0][j], x[1][j], x[2][j]};
        want_counts[bin_of_point(xs)]++;
    }
    // Bin count, both kernels (the runtime runs the tiled one on grids of at most LOCAL_BINS
    // bins): per bin, the ranks of its points must be 0 .. count - 1.
    auto check_ranks = [&](const char* which, const std::vector<unsigned>& counts, const std::vector<unsigned>& rank) {
        if (counts != want_counts) { printf("FAIL %s: bin counts\n", which); return false; }
        std::vector<std::vector<char>> seen(nbins);
        for (unsigned b = 0; b < nbins; b++) seen[b].assign(counts[b], 0);
        for (int j = 0; j < NPTS; j++) {
            const T xs[3] = {x[0][j], x[1][j], x[2][j]};
            const unsigned b = bin_of_point(xs);
            if (rank[j] >= counts[b] || seen[b][rank[j]]++) { printf("FAIL %s: rank %u of point %d in bin %u\n", which, rank[j], j, b); return false; }
        }
        return true;
    };
    // Both counts also report the first point with a non-finite coordinate: none here.
    unsigned bad = ~0u;
    std::vector<unsigned> counts(nbins, 0), rank(NPTS, ~0u);
    LAUNCH(nudt_bin_count, blocks(NPTS, THREADS_nudt_bin_count), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, rank.data(), counts.data(), &bad);
    if (!check_ranks("nudt_bin_count", counts, rank)) return 1;
    if (nbins > LOCAL_BINS) { printf("FAIL the case has more bins than the tiled count takes\n"); return 1; }
    counts.assign(nbins, 0); rank.assign(NPTS, ~0u);
    LAUNCH(nudt_bin_count_local, blocks(NPTS, THREADS_nudt_bin_count_local * COUNT_ITEMS), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, nbins, rank.data(), counts.data(), &bad);
    if (!check_ranks("nudt_bin_count_local", counts, rank)) return 1;
    if (bad != ~0u) { printf("FAIL finite points reported bad at %u\n", bad); return 1; }
    // Non-finite coordinates in the last dimension: the first one's index, each point still
    // counted in a bin of the grid.
    {
        std::vector<T> bx[3] = {x[0], x[1], x[2]};
        const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
        bx[DIM - 1][NPTS - 3] = inf;
        bx[DIM - 1][NPTS / 2] = nan;
        bx[DIM - 1][NPTS - 1] = -inf;
        for (int local = 0; local < 2; local++) {
            std::vector<unsigned> cnt(nbins, 0), rk(NPTS, ~0u);
            unsigned first = ~0u;
            if (local) LAUNCH(nudt_bin_count_local, blocks(NPTS, THREADS_nudt_bin_count_local * COUNT_ITEMS), 1, NPTS, bx[0].data(), bx[1].data(), bx[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, nbins, rk.data(), cnt.data(), &first);
            else LAUNCH(nudt_bin_count, blocks(NPTS, THREADS_nudt_bin_count), 1, NPTS, bx[0].data(), bx[1].data(), bx[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, rk.data(), cnt.data(), &first);
            unsigned total = 0;
            for (unsigned c : cnt) total += c;
            if (first != (unsigned)(NPTS / 2) || total != NPTS) { printf("FAIL non-finite points (local %d): first %u of %d, %u counted\n", local, first, NPTS / 2, total); return 1; }
        }
    }
    // Prefix sums of bins and subproblems.
    std::vector<unsigned> start(nbins + 1, 0xdeadbeefu), substart(nbins + 1, 0xdeadbeefu);
    bin_scan(counts, MAXSUB, start, substart);
    if (start != scan(counts, 1) || substart != scan(counts, MAXSUB)) { printf("FAIL prefix sums\n"); return 1; }
    // The sorted indices: a permutation of the points, each inside its bin's range.
    auto check_sorted = [&](const char* which, const std::vector<unsigned>& idx) {
        std::vector<int> seen(NPTS, 0);
        for (unsigned b = 0; b < nbins; b++)
            for (unsigned p = start[b]; p < start[b + 1]; p++) {
                const unsigned j = idx[p];
                if (j >= NPTS || seen[j]++) { printf("FAIL %s: permutation at %u\n", which, p); return false; }
                const T xs[3] = {x[0][j], x[1][j], x[2][j]};
                if (bin_of_point(xs) != b) { printf("FAIL %s: point %u in bin %u, belongs to %u\n", which, p, b, bin_of_point(xs)); return false; }
            }
        return true;
    };
    // The two-pass sort (counts only, buckets of 4 bins, then bins), as the runtime launches
    // it past L2, with the fill counters zeroed before each pass.
    {
        std::vector<unsigned> cnt(nbins, 0), idx2(NPTS, ~0u);
        std::vector<uint2> part(NPTS, make_uint2(~0u, ~0u));
        LAUNCH(nudt_bin_count, blocks(NPTS, THREADS_nudt_bin_count), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, (unsigned*)nullptr, cnt.data(), (unsigned*)nullptr);
        if (cnt != want_counts) { printf("FAIL nudt_bin_count without ranks: bin counts\n"); return 1; }
        const unsigned shift = 2, nbuckets = (nbins + 3) / 4;
        if (nbuckets > SORT_BUCKETS) { printf("FAIL the case has more buckets than the sort takes\n"); return 1; }
        std::fill(cnt.begin(), cnt.end(), 0u);
        LAUNCH(nudt_bin_bucket, blocks(NPTS, THREADS_nudt_bin_bucket * COUNT_ITEMS), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, nbuckets, shift, start.data(), cnt.data(), part.data());
        for (unsigned p = 0; p < NPTS; p++) {
            const unsigned j = part[p].x, b = part[p].y;
            const T xs[3] = {x[0][j], x[1][j], x[2][j]};
            if (j >= NPTS || b != bin_of_point(xs) || p < start[(b >> shift) << shift] || p >= start[std::min(((b >> shift) + 1) << shift, nbins)]) {
                printf("FAIL nudt_bin_bucket: entry %u (point %u, bin %u) outside its bucket\n", p, j, b); return 1;
            }
        }
        std::fill(cnt.begin(), cnt.end(), 0u);
        LAUNCH(nudt_bin_place, blocks(NPTS, THREADS_nudt_bin_place * COUNT_ITEMS), 1, NPTS, part.data(), start.data(), cnt.data(), idx2.data());
        if (!check_sorted("two-pass sort", idx2)) return 1;
    }
    std::vector<unsigned> idx(NPTS, ~0u);
    LAUNCH(nudt_bin_scatter, blocks(NPTS, THREADS_nudt_bin_scatter), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], one_set, 1u, nbins, rank.data(), start.data(), idx.data());
    if (!check_sorted("nudt_bin_scatter", idx)) return 1;
    // Subproblem lists, launched like the subproblem kernels for the runtime's upper bound.
    const unsigned total = substart[nbins];
    if (total > SUB_BOUND) { printf("FAIL %u subproblems past the bound %u\n", total, (unsigned)SUB_BOUND); return 1; }
    std::vector<unsigned> sub_bin(SUB_BOUND, ~0u), sub_first(SUB_BOUND, ~0u);
    LAUNCH(nudt_subprob_map, blocks(nbins, THREADS_nudt_subprob_map), 1, nbins, start.data(), substart.data(), MAXSUB, sub_bin.data(), sub_first.data());
    for (unsigned s = 0; s < total; s++) {
        const unsigned b = sub_bin[s];
        if (b >= nbins || sub_first[s] < start[b] || sub_first[s] >= start[b + 1] || (sub_first[s] - start[b]) % MAXSUB) {
            printf("FAIL subproblem %u: bin %u first %u\n", s, b, sub_first[s]); return 1;
        }
    }
    // Reference spreading, in double, with the exact kernel.
    const double a = W / 2.0;
    auto loc = [&](int d, int j, int* i0, double* xg) {
        double t = (double)x[d][j] / (2 * pi);
        double g = (t - std::floor(t)) * n[d];
        if (g >= n[d]) g -= n[d];
        *xg = g;
        *i0 = (int)std::ceil(g - a);
    };
    // Calls f(weight, grid index) for each of the W^DIM grid points of point j's window.
    auto window = [&](int j, auto f) {
        int i0[3] = {0, 0, 0}; double xg[3] = {0, 0, 0};
        for (int d = 0; d < DIM; d++) loc(d, j, &i0[d], &xg[d]);
        for (int p = 0; p < (DIM > 0 ? W : 1); p++)
        for (int q = 0; q < (DIM > 1 ? W : 1); q++)
        for (int r = 0; r < (DIM > 2 ? W : 1); r++) {
            int o[3] = {p, q, r};
            double wgt = 1; int gi = 0;
            for (int d = 0; d < 3; d++) {
                int g = 0;
                if (d < DIM) { wgt *= phi((i0[d] + o[d] - xg[d]) / a); g = ((i0[d] + o[d]) % n[d] + n[d]) % n[d]; }
                gi = gi * n[d] + g;
            }
            f(wgt, gi);
        }
    };
    std::vector<std::complex<double>> ref(ntr * glen);
    double refmax = 0;
    for (int j = 0; j < NPTS; j++)
        window(j, [&](double wgt, int gi) {
            for (int tr = 0; tr < ntr; tr++)
                ref[tr * glen + gi] += wgt * std::complex<double>(c[tr * NPTS + j].x, c[tr * NPTS + j].y);
        });
    for (auto& v : ref) refmax = std::max(refmax, std::abs(v));
    std::vector<T2> ggm(ntr * glen, T2{0, 0}), gsm(ntr * glen, T2{0, 0}), god(ntr * glen, T2{0, 0});
    LAUNCH(nudt_spread_gm, blocks(NPTS, THREADS_nudt_spread_gm), 1, NPTS, idx.data(), x[0].data(), x[1].data(), x[2].data(), c.data(), ggm.data(), n[0], n[1], n[2], ntr, NPTS, glen, one_set, 1u, 0u);
    LAUNCH(nudt_spread_sm, SUB_BOUND, ntr, sub_bin.data(), sub_first.data(), substart.data(), start.data(), idx.data(), x[0].data(), x[1].data(), x[2].data(), c.data(), gsm.data(), n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, 0u, 1u);
    LAUNCH(nudt_spread_od, SUB_BOUND, ntr, sub_bin.data(), sub_first.data(), substart.data(), start.data(), idx.data(), x[0].data(), x[1].data(), x[2].data(), c.data(), god.data(), n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, 0u, 1u);
    double egm = 0, esm = 0, eod = 0;
    for (int i = 0; i < ntr * glen; i++) {
        egm = std::max(egm, std::abs(std::complex<double>(ggm[i].x, ggm[i].y) - ref[i]));
        esm = std::max(esm, std::abs(std::complex<double>(gsm[i].x, gsm[i].y) - ref[i]));
        eod = std::max(eod, std::abs(std::complex<double>(god[i].x, god[i].y) - ref[i]));
    }
    egm /= refmax; esm /= refmax; eod /= refmax;
    // Interpolation of a random grid.
    std::vector<T2> grid(ntr * glen);
    for (auto& v : grid) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    std::vector<T2> ogm(ntr * NPTS, T2{0, 0}), osm(ntr * NPTS, T2{0, 0});
    LAUNCH(nudt_interp_gm, blocks(NPTS, THREADS_nudt_interp_gm), 1, NPTS, idx.data(), x[0].data(), x[1].data(), x[2].data(), grid.data(), ogm.data(), n[0], n[1], n[2], ntr, NPTS, glen, one_set, 1u, 0u);
    LAUNCH(nudt_interp_sm, SUB_BOUND, ntr, sub_bin.data(), sub_first.data(), substart.data(), start.data(), idx.data(), x[0].data(), x[1].data(), x[2].data(), grid.data(), osm.data(), n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, 0u, 1u);
    double igm = 0, ism = 0, imax = 0;
    for (int j = 0; j < NPTS; j++) {
        std::vector<std::complex<double>> sums(ntr);
        window(j, [&](double wgt, int gi) {
            for (int tr = 0; tr < ntr; tr++)
                sums[tr] += wgt * std::complex<double>(grid[tr * glen + gi].x, grid[tr * glen + gi].y);
        });
        for (int tr = 0; tr < ntr; tr++) {
            const std::complex<double> s = sums[tr];
            imax = std::max(imax, std::abs(s));
            igm = std::max(igm, std::abs(std::complex<double>(ogm[tr * NPTS + j].x, ogm[tr * NPTS + j].y) - s));
            ism = std::max(ism, std::abs(std::complex<double>(osm[tr * NPTS + j].x, osm[tr * NPTS + j].y) - s));
        }
    }
    igm /= imax; ism /= imax;
    // Mode copies: 5 x 4 x 3 user modes (unused dims 1) onto the fine grid and back.
    const int m[3] = {5, DIM > 1 ? 4 : 1, DIM > 2 ? 3 : 1};
    std::vector<int> gi[3]; std::vector<T> cf[3];
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < m[d]; i++) { gi[d].push_back(d < DIM ? n[d] - 1 - i : 0); cf[d].push_back((T)(1.0 + 0.25 * i + d)); }
    const int nm = m[0] * m[1] * m[2];
    std::vector<T2> modes(ntr * nm), back(ntr * nm), fine(ntr * glen, T2{0, 0});
    for (auto& v : modes) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    LAUNCH(nudt_modes_to_grid, blocks(nm, THREADS_nudt_modes_to_grid), ntr, nm, m[1], m[2], gi[0].data(), gi[1].data(), gi[2].data(), cf[0].data(), cf[1].data(), cf[2].data(), modes.data(), fine.data(), n[1], n[2], glen, nm);
    LAUNCH(nudt_grid_to_modes, blocks(nm, THREADS_nudt_grid_to_modes), ntr, nm, m[1], m[2], gi[0].data(), gi[1].data(), gi[2].data(), cf[0].data(), cf[1].data(), cf[2].data(), fine.data(), back.data(), n[1], n[2], glen, nm);
    double emodes = 0;
    for (int tr = 0; tr < ntr; tr++)
        for (int i = 0; i < nm; i++) {
            int i2 = i % m[2], i1 = (i / m[2]) % m[1], i0 = i / (m[2] * m[1]);
            double f = (double)cf[0][i0] * cf[1][i1] * cf[2][i2];
            T2 v = modes[tr * nm + i], b = back[tr * nm + i];
            emodes = std::max(emodes, std::abs(std::complex<double>(b.x, b.y) - f * f * std::complex<double>(v.x, v.y)) / (f * f));
            int g = (gi[0][i0] * n[1] + gi[1][i1]) * n[2] + gi[2][i2];
            T2 fv = fine[tr * glen + g];
            emodes = std::max(emodes, std::abs(std::complex<double>(fv.x, fv.y) - f * std::complex<double>(v.x, v.y)) / f);
        }
    // A point set per transform: the points cut into three sets, the middle one empty, sorted
    // together set by set (a point's bin is its set's times nbins plus its bin), then each set
    // spread onto and interpolated from its own grid, every set in one launch (ntr = 1).
    double eset = 0;
    {
        const unsigned nsets = 3, tbins = nsets * nbins;
        const unsigned sets[4] = {0u, (unsigned)NPTS / 3, (unsigned)NPTS / 3, (unsigned)NPTS};
        auto set_of_point = [&](unsigned j) {
            unsigned s = 0;
            while (s + 1 < nsets && sets[s + 1] <= j) s++;
            return s;
        };
        std::vector<unsigned> want(tbins, 0), cnt(tbins, 0), rk(NPTS, ~0u);
        for (int j = 0; j < NPTS; j++) {
            const T xs[3] = {x[0][j], x[1][j], x[2][j]};
            want[set_of_point(j) * nbins + bin_of_point(xs)]++;
        }
        unsigned none = ~0u;
        LAUNCH(nudt_bin_count, blocks(NPTS, THREADS_nudt_bin_count), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], sets, nsets, nbins, rk.data(), cnt.data(), &none);
        if (cnt != want) { printf("FAIL per-set bin counts\n"); return 1; }
        if (tbins <= LOCAL_BINS) {
            std::vector<unsigned> cl(tbins, 0), rl(NPTS, ~0u);
            LAUNCH(nudt_bin_count_local, blocks(NPTS, THREADS_nudt_bin_count_local * COUNT_ITEMS), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], sets, nsets, nbins, tbins, rl.data(), cl.data(), &none);
            if (cl != want) { printf("FAIL per-set tiled bin counts\n"); return 1; }
        }
        std::vector<unsigned> st(tbins + 1, 0xdeadbeefu), sst(tbins + 1, 0xdeadbeefu), sidx(NPTS, ~0u);
        bin_scan(cnt, MAXSUB, st, sst);
        LAUNCH(nudt_bin_scatter, blocks(NPTS, THREADS_nudt_bin_scatter), 1, NPTS, x[0].data(), x[1].data(), x[2].data(), n[0], n[1], n[2], nb[1], nb[2], sets, nsets, nbins, rk.data(), st.data(), sidx.data());
        // Each set holds its own slots of the bin order, each point in its bin's range.
        for (unsigned b = 0; b < tbins; b++)
            for (unsigned p = st[b]; p < st[b + 1]; p++) {
                const unsigned j = sidx[p];
                const T xs[3] = {x[0][j], x[1][j], x[2][j]};
                if (j >= NPTS || set_of_point(j) != set_of_point(p) || set_of_point(j) * nbins + bin_of_point(xs) != b) { printf("FAIL per-set sort at %u\n", p); return 1; }
            }
        if (sst[tbins] > SET_SUB_BOUND) { printf("FAIL per-set subproblems past the bound\n"); return 1; }
        std::vector<unsigned> sb(SET_SUB_BOUND, ~0u), sf(SET_SUB_BOUND, ~0u);
        LAUNCH(nudt_subprob_map, blocks(tbins, THREADS_nudt_subprob_map), 1, tbins, st.data(), sst.data(), MAXSUB, sb.data(), sf.data());
        std::vector<std::complex<double>> sref(nsets * glen);
        for (int j = 0; j < NPTS; j++)
            window(j, [&](double wgt, int gi) { sref[set_of_point(j) * glen + gi] += wgt * std::complex<double>(c[j].x, c[j].y); });
        double smax = 0;
        for (auto& v : sref) smax = std::max(smax, std::abs(v));
        std::vector<T2> sg[3];
        for (auto& g : sg) g.assign(nsets * glen, T2{0, 0});
        // Two launches of each kernel, as a plan runs its batches: sets [0, 2), then [2, 3),
        // each batch's vectors from its first point and its grids from its first set's.
        const unsigned parts[3] = {0u, 2u, nsets};
        for (int h = 0; h < 2; h++) {
            const unsigned s0 = parts[h], ns = parts[h + 1] - s0, j0 = sets[s0], mb = sets[s0 + ns] - j0;
            LAUNCH(nudt_spread_gm, blocks(NPTS, THREADS_nudt_spread_gm), 1, mb, sidx.data(), x[0].data(), x[1].data(), x[2].data(), c.data() + j0, sg[0].data() + s0 * glen, n[0], n[1], n[2], 1, NPTS, glen, sets, ns, s0);
            LAUNCH(nudt_spread_sm, SET_SUB_BOUND, 1, sb.data(), sf.data(), sst.data(), st.data(), sidx.data(), x[0].data(), x[1].data(), x[2].data(), c.data() + j0, sg[1].data() + s0 * glen, n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, s0, ns);
            LAUNCH(nudt_spread_od, SET_SUB_BOUND, 1, sb.data(), sf.data(), sst.data(), st.data(), sidx.data(), x[0].data(), x[1].data(), x[2].data(), c.data() + j0, sg[2].data() + s0 * glen, n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, s0, ns);
        }
        for (auto& g : sg)
            for (unsigned i = 0; i < nsets * glen; i++)
                eset = std::max(eset, std::abs(std::complex<double>(g[i].x, g[i].y) - sref[i]) / smax);
        std::vector<T2> sgrid(nsets * glen), so[2];
        for (auto& v : sgrid) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
        for (auto& o : so) o.assign(NPTS, T2{0, 0});
        for (int h = 0; h < 2; h++) {
            const unsigned s0 = parts[h], ns = parts[h + 1] - s0, j0 = sets[s0], mb = sets[s0 + ns] - j0;
            LAUNCH(nudt_interp_gm, blocks(NPTS, THREADS_nudt_interp_gm), 1, mb, sidx.data(), x[0].data(), x[1].data(), x[2].data(), sgrid.data() + s0 * glen, so[0].data() + j0, n[0], n[1], n[2], 1, NPTS, glen, sets, ns, s0);
            LAUNCH(nudt_interp_sm, SET_SUB_BOUND, 1, sb.data(), sf.data(), sst.data(), st.data(), sidx.data(), x[0].data(), x[1].data(), x[2].data(), sgrid.data() + s0 * glen, so[1].data() + j0, n[0], n[1], n[2], nb[1], nb[2], NPTS, glen, nbins, s0, ns);
        }
        for (int j = 0; j < NPTS; j++) {
            std::complex<double> sum = 0;
            window(j, [&](double wgt, int gi) { sum += wgt * std::complex<double>(sgrid[set_of_point(j) * glen + gi].x, sgrid[set_of_point(j) * glen + gi].y); });
            for (auto& o : so) eset = std::max(eset, std::abs(std::complex<double>(o[j].x, o[j].y) - sum) / std::max(1.0, std::abs(sum)));
        }
    }
    printf("spread gm %.3e sm %.3e od %.3e interp gm %.3e sm %.3e modes %.3e per-set %.3e subproblems %u bins %u\n", egm, esm, eod, igm, ism, emodes, eset, total, nbins);
    const double bound = BOUND;
    const double eps = SINGLE ? 1e-5 : 1e-12;
    if (!(egm <= bound && esm <= bound && eod <= bound && igm <= bound && ism <= bound && emodes <= eps && eset <= bound)) { printf("FAIL\n"); return 1; }
    return 0;
}
"#;

const COMMON_DRIVER: &str = r#"
// ---- common-module driver: the steps that do not depend on a spread module ---------------
static std::vector<unsigned> scan(const std::vector<unsigned>& c, unsigned div) {
    std::vector<unsigned> s(c.size() + 1, 0);
    for (size_t i = 0; i < c.size(); i++) s[i + 1] = s[i] + (c[i] + div - 1) / div;
    return s;
}
// Checks the prefix sums on `counts` against the host's.
static bool check_scan(const std::vector<unsigned>& counts, unsigned maxsub) {
    const unsigned nb = counts.size();
    std::vector<unsigned> start(nb + 1, 0xdeadbeefu), substart(nb + 1, 0xdeadbeefu);
    bin_scan(counts, maxsub, start, substart);
    if (start != scan(counts, 1) || substart != scan(counts, maxsub)) {
        printf("FAIL prefix sums of %u bins\n", nb);
        return false;
    }
    return true;
}
int main() {
    const int ntr = 2;
    const double pi = 3.14159265358979323846;
    // Prefix sums of one tile and of more tiles than one, empty bins included.
    for (unsigned nb : {77u, 3u * SCAN_TILE + 77u})
        for (unsigned maxsub : {1u, 5u, 1024u}) {
            std::vector<unsigned> big(nb);
            for (auto& v : big) v = urand() < 0.2 ? 0u : (unsigned)(urand() * 3000);
            if (!check_scan(big, maxsub)) return 1;
        }
    // The tile totals' sums over more tiles than the block takes at once.
    {
        const unsigned nt = 2 * SCAN_TILE + 5;
        std::vector<uint2> tiles(nt);
        std::vector<unsigned> start(1, 0), substart(1, 0);
        for (auto& t : tiles) t = make_uint2((unsigned)(urand() * 5000), (unsigned)(urand() * 50));
        const std::vector<uint2> sums = tiles;
        LAUNCH(nudt_bin_scan_totals, 1, 1, nt, tiles.data(), 0u, start.data(), substart.data(), substart.data());
        unsigned ec = 0, es = 0;
        for (unsigned i = 0; i < nt; i++) {
            if (tiles[i].x != ec || tiles[i].y != es) { printf("FAIL tile sums at %u\n", i); return 1; }
            ec += sums[i].x;
            es += sums[i].y;
        }
        if (start[0] != ec || substart[0] != es) { printf("FAIL tile totals\n"); return 1; }
    }
    // Bounding interval by per-block partials, over more points than one pass of the grid.
    {
        std::vector<T> v(MINMAX_BLOCKS * THREADS_nudt_minmax + 1001);
        for (auto& e : v) e = (T)((urand() - 0.3) * 1e3);
        std::vector<double> part(2 * MINMAX_BLOCKS, 0.0);
        // The whole array, then one set of several: 1000 values from the 300th.
        for (u64 first : {(u64)0, (u64)300}) {
            const u64 n = first ? 1000 : v.size();
            LAUNCH(nudt_minmax, MINMAX_BLOCKS, 1, first, n, v.data(), part.data());
            double lo = INFINITY, hi = -INFINITY, wlo = INFINITY, whi = -INFINITY;
            for (unsigned b = 0; b < MINMAX_BLOCKS; b++) { lo = std::min(lo, part[2 * b]); hi = std::max(hi, part[2 * b + 1]); }
            for (u64 i = first; i < first + n; i++) { wlo = std::min(wlo, (double)v[i]); whi = std::max(whi, (double)v[i]); }
            if (lo != wlo || hi != whi) { printf("FAIL minmax from %llu: [%g, %g], want [%g, %g]\n", (unsigned long long)first, lo, hi, wlo, whi); return 1; }
        }
        double lo;
        // A NaN (which fmin would skip) or an infinity marks the interval unbounded below.
        for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
            v[v.size() - 7] = bad;
            LAUNCH(nudt_minmax, MINMAX_BLOCKS, 1, (u64)0, (u64)v.size(), v.data(), part.data());
            lo = INFINITY;
            for (unsigned b = 0; b < MINMAX_BLOCKS; b++) lo = std::min(lo, part[2 * b]);
            if (lo != -INFINITY) { printf("FAIL minmax with %g: min %g, want -inf\n", (double)bad, lo); return 1; }
        }
    }
    std::vector<T> x[3];
    for (int d = 0; d < 3; d++) {
        x[d].resize(NPTS);
        for (int j = 0; j < NPTS; j++) x[d][j] = (T)((urand() * 6.0 - 3.0) * pi);
    }
    std::vector<T2> c(ntr * NPTS);
    for (auto& v : c) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    for (int DIM = 1; DIM <= 3; DIM++) {
        double et3 = 0;
        {
            const double cx[3] = {0.3, -0.2, 0.1}, ig[3] = {0.9, 1.1, 0.7}, cs[3] = {2.0, -1.5, 0.5};
            const double sgn = -1;
            std::vector<T> y[3];
            for (int d = 0; d < 3; d++) y[d].assign(NPTS, (T)0);
            std::vector<T2> pre(NPTS), post(NPTS);
            // In two sets, the second from the first's end: every point once, at its place.
            const unsigned half = NPTS / 2;
            for (unsigned part = 0; part < 2; part++) {
                const u64 first = part ? half : 0;
                const unsigned m = part ? NPTS - half : half;
                LAUNCH(nudt_t3_sources, blocks(m, THREADS_nudt_t3_sources), 1, first, m, DIM, x[0].data(), x[1].data(), x[2].data(), cx[0], cx[1], cx[2], ig[0], ig[1], ig[2], cs[0], cs[1], cs[2], sgn, y[0].data(), y[1].data(), y[2].data(), pre.data());
            }
            // psi-hat by a 6-point quadrature of a smooth even function on [0, 1].
            const int nq = 6;
            std::vector<double> qz(nq), qw(nq);
            for (int q = 0; q < nq; q++) { qz[q] = (q + 0.5) / nq; qw[q] = std::exp(-qz[q] * qz[q]) / nq; }
            const double alpha = 0.1;
            auto psi_hat = [&](double w) { double s = 0; for (int q = 0; q < nq; q++) s += qw[q] * std::cos(w * alpha * qz[q]); return 2 * alpha * s; };
            std::vector<T> u[3];
            for (int d = 0; d < 3; d++) u[d].assign(NPTS, (T)0);
            for (unsigned part = 0; part < 2; part++) {
                const u64 first = part ? half : 0;
                const unsigned k = part ? NPTS - half : half;
                LAUNCH(nudt_t3_targets, blocks(k, THREADS_nudt_t3_targets), 1, first, k, DIM, x[0].data(), x[1].data(), x[2].data(), cs[0], cs[1], cs[2], ig[0], ig[1], ig[2], cx[0], cx[1], cx[2], sgn, nq, qz.data(), qw.data(), alpha, u[0].data(), u[1].data(), u[2].data(), post.data());
            }
            const double tol = SINGLE ? 1e-5 : 1e-13;
            for (int j = 0; j < NPTS; j++) {
                double ph = 0, tph = 0, mag = 1;
                for (int d = 0; d < DIM; d++) {
                    const double v = (double)x[d][j] - cx[d];
                    et3 = std::max(et3, std::abs((double)y[d][j] - v * ig[d]) / (1 + std::abs(v * ig[d])));
                    ph += cs[d] * v;
                    const double uu = ig[d] * ((double)x[d][j] - cs[d]);
                    et3 = std::max(et3, std::abs((double)u[d][j] - uu) / (1 + std::abs(uu)));
                    tph += (double)x[d][j] * cx[d];
                    mag /= psi_hat(uu);
                }
                et3 = std::max(et3, std::abs(std::complex<double>(pre[j].x, pre[j].y) - std::polar(1.0, sgn * ph)));
                et3 = std::max(et3, std::abs(std::complex<double>(post[j].x, post[j].y) - std::polar(mag, sgn * tph)) / mag);
            }
            std::vector<T2> prod(ntr * NPTS);
            // The forward's product, then the adjoint's (conjugate factor); with the factors
            // of all points, then from the fifth (a set's start).
            for (int conj = 0; conj < 2; conj++)
            for (unsigned f0 : {0u, 5u}) {
                const unsigned n = NPTS - f0;
                LAUNCH(nudt_cmul, blocks(n, THREADS_nudt_cmul), ntr, (u64)n, c.data(), pre.data(), (u64)f0, prod.data(), (u64)NPTS, conj);
                for (int tr = 0; tr < ntr; tr++)
                    for (unsigned j = 0; j < n; j++) {
                        const std::complex<double> f(pre[f0 + j].x, pre[f0 + j].y);
                        const std::complex<double> want = std::complex<double>(c[tr * NPTS + j].x, c[tr * NPTS + j].y) * (conj ? std::conj(f) : f);
                        et3 = std::max(et3, std::abs(std::complex<double>(prod[tr * NPTS + j].x, prod[tr * NPTS + j].y) - want));
                    }
            }
            if (!(et3 <= tol)) { printf("FAIL type 3 steps: error %.3e\n", et3); return 1; }
        }
        printf("dim %d: type 3 factors and products within %.1e; ", DIM, et3);
    }
    printf("prefix sums and minmax exact\n");
    return 0;
}
"#;

const GW_DRIVER: &str = r#"
// ---- wide-Gaussian driver -----------------------------------------------------------------
typedef std::complex<double> C;
static C cx(T2 v) { return C(v.x, v.y); }
int main() {
    const int n[3] = {N0, N1, N2};
    const int glen = n[0] * n[1] * n[2];
    const int ntr = 2;
    const double pi = 3.14159265358979323846;
    const double b = SHAPE, q = 1.0 / (4.0 * b);
    std::vector<T> e3(2 * HALF + 1);
    for (int k = -HALF; k <= HALF; k++) e3[k + HALF] = (T)std::exp(-(double)k * k * q);
    // Window of a coordinate along one dimension: its 2 HALF + 1 grid indices and weights.
    auto window = [&](T x, int nd, int* idx, double* w) {
        double t = (double)x / (2 * pi);
        double xg = (t - std::floor(t)) * nd;
        if (xg >= nd) xg -= nd;
        double c = std::ceil(xg - 0.5);
        for (int k = -HALF; k <= HALF; k++) {
            idx[k + HALF] = (((int)c + k) % nd + nd) % nd;
            w[k + HALF] = std::exp(-(c + k - xg) * (c + k - xg) * q);
        }
    };
    // Visits the window's points of a point with coordinates x[d][j] as (flat index, weight).
    std::vector<T> x[3], s[3], u[3];
    for (int d = 0; d < 3; d++) {
        x[d].resize(NPTS);
        for (int j = 0; j < NPTS; j++) x[d][j] = (T)((urand() * 6.0 - 3.0) * pi);
        s[d].resize(NTGT);
        for (int k = 0; k < NTGT; k++) s[d][k] = (T)(urand() * 40.0 - 13.0);
        u[d].assign(NTGT, (T)0);
    }
    x[0][0] = (T)pi; x[0][1] = (T)(-pi);
    auto visit = [&](std::vector<T>* pts, int j, auto f) {
        int idx[3][2 * HALF + 1]; double w[3][2 * HALF + 1];
        for (int d = 0; d < 3; d++) {
            if (d < DIM) window(pts[d][j], n[d], idx[d], w[d]);
            else { for (int k = 0; k <= 2 * HALF; k++) { idx[d][k] = 0; w[d][k] = k == 0 ? 1.0 : 0.0; } }
        }
        const int span[3] = {2 * HALF + 1, DIM > 1 ? 2 * HALF + 1 : 1, DIM > 2 ? 2 * HALF + 1 : 1};
        for (int a = 0; a < span[0]; a++)
            for (int bb = 0; bb < span[1]; bb++)
                for (int e = 0; e < span[2]; e++)
                    f((idx[0][a] * n[1] + idx[1][bb]) * n[2] + idx[2][e], w[0][a] * w[1][bb] * w[2][e]);
    };
    std::vector<T2> c(ntr * NPTS), pre(NPTS);
    for (auto& v : c) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    for (auto& v : pre) { double ph = urand() * 2 * pi; v.x = (T)std::cos(ph); v.y = (T)std::sin(ph); }
    // Spreading with pre-phases.
    std::vector<C> ref(ntr * glen);
    for (int j = 0; j < NPTS; j++)
        visit(x, j, [&](int g, double w) {
            for (int tr = 0; tr < ntr; tr++) ref[tr * glen + g] += w * cx(c[tr * NPTS + j]) * cx(pre[j]);
        });
    std::vector<T2> grid(ntr * glen, T2{0, 0});
    LAUNCH(nudt_gw_spread, blocks(NPTS, THREADS_nudt_gw_spread), ntr, NPTS, x[0].data(), x[1].data(), x[2].data(), pre.data(), c.data(), grid.data(), n[0], n[1], n[2], e3.data(), q, NPTS, glen, 0);
    double espread = 0, rmax = 0;
    for (int i = 0; i < ntr * glen; i++) {
        espread = std::max(espread, std::abs(cx(grid[i]) - ref[i]));
        rmax = std::max(rmax, std::abs(ref[i]));
    }
    espread /= rmax;
    // Pre-compensation.
    std::vector<T> p[3];
    for (int d = 0; d < 3; d++)
        for (int i = 0; i < n[d]; i++) p[d].push_back((T)(d < DIM ? 0.5 + urand() : 1.0));
    std::vector<T2> before = grid;
    LAUNCH(nudt_gw_precomp, blocks(glen, THREADS_nudt_gw_precomp), ntr, glen, grid.data(), p[0].data(), p[1].data(), p[2].data(), n[1], n[2], glen);
    double eprecomp = 0;
    for (int tr = 0; tr < ntr; tr++)
        for (int i = 0; i < glen; i++) {
            int i2 = i % n[2], i1 = (i / n[2]) % n[1], i0 = i / (n[2] * n[1]);
            C want = cx(before[tr * glen + i]) * ((double)p[0][i0] * p[1][i1] * p[2][i2]);
            eprecomp = std::max(eprecomp, std::abs(cx(grid[tr * glen + i]) - want) / rmax);
        }
    // Target factors: u_d = (s_d - cs_d) dx_d, post = prod e^{b u^2}/(4 pi b) e^{i sgn sum s_d cx_d}.
    const double cs[3] = {1.5, -2.0, 0.25}, dxs[3] = {0.11, 0.07, 0.13}, cxs[3] = {0.3, -0.6, 1.1};
    const double sgn = -1;
    std::vector<T2> post(NTGT);
    LAUNCH(nudt_gw_targets, blocks(NTGT, THREADS_nudt_gw_targets), 1, NTGT, s[0].data(), s[1].data(), s[2].data(), cs[0], cs[1], cs[2], dxs[0], dxs[1], dxs[2], cxs[0], cxs[1], cxs[2], sgn, b, u[0].data(), u[1].data(), u[2].data(), post.data());
    double etargets = 0;
    for (int k = 0; k < NTGT; k++) {
        double mag = 1, ph = 0;
        for (int d = 0; d < DIM; d++) {
            double uu = ((double)s[d][k] - cs[d]) * dxs[d];
            etargets = std::max(etargets, std::abs((double)u[d][k] - uu) / std::max(1.0, std::abs(uu)));
            mag *= std::exp(b * uu * uu) / (4 * pi * b);
            ph += (double)s[d][k] * cxs[d];
        }
        C want = std::polar(mag, sgn * ph);
        etargets = std::max(etargets, std::abs(cx(post[k]) - want) / std::abs(want));
    }
    // Interpolation with post-factors, of a random grid at the scaled targets.
    for (auto& v : grid) { v.x = (T)(urand() - 0.5); v.y = (T)(urand() - 0.5); }
    std::vector<T2> out(ntr * NTGT, T2{0, 0});
    LAUNCH(nudt_gw_interp, blocks(NTGT, THREADS_nudt_gw_interp), ntr, NTGT, u[0].data(), u[1].data(), u[2].data(), post.data(), grid.data(), out.data(), n[0], n[1], n[2], e3.data(), q, NTGT, glen, 0);
    double einterp = 0, imax = 0;
    std::vector<C> want(ntr * NTGT);
    for (int k = 0; k < NTGT; k++)
        visit(u, k, [&](int g, double w) {
            for (int tr = 0; tr < ntr; tr++) want[tr * NTGT + k] += w * cx(grid[tr * glen + g]) * cx(post[k]);
        });
    for (int i = 0; i < ntr * NTGT; i++) {
        imax = std::max(imax, std::abs(want[i]));
        einterp = std::max(einterp, std::abs(cx(out[i]) - want[i]));
    }
    einterp /= imax;
    printf("spread %.3e precomp %.3e targets %.3e interp %.3e (window %d, grid %d x %d x %d)\n", espread, eprecomp, etargets, einterp, 2 * HALF + 1, n[0], n[1], n[2]);
    const double bound = SINGLE ? 2e-5 : 1e-12;
    if (!(espread <= bound && eprecomp <= bound && etargets <= bound && einterp <= bound)) { printf("FAIL\n"); return 1; }
    return 0;
}
"#;

fn compiler() -> Option<String> {
    ["c++", "g++", "clang++"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(String::from)
}

/// Runs `run` on every case (in parallel threads) with the C++ compiler and a scratch
/// directory (`tag` in its name), prints what each case reported, then fails with every case
/// that failed (`what` the cases are). Without a compiler the test says SKIPPED.
fn emulate<C: Sync>(
    tag: &str,
    what: &str,
    cases: &[C],
    run: impl Fn(&str, &Path, &C) -> Result<String, String> + Sync,
) {
    let Some(cxx) = compiler() else {
        eprintln!("SKIPPED: no C++ compiler (c++, g++ or clang++) to emulate the CUDA kernels");
        return;
    };
    let dir = std::env::temp_dir().join(format!("nudt-cuda-emulate{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let r = run(&cxx, &dir, case);
                results.lock().unwrap().push(r);
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let results = results.into_inner().unwrap();
    let mut failures = Vec::new();
    for r in &results {
        match r {
            Ok(line) => eprintln!("{line}"),
            Err(e) => failures.push(e.as_str()),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {what} failed:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

/// A module's source as the emulation compiles it: block-scope `extern __shared__` arrays
/// (dynamic shared memory) become plain `extern` declarations of the header's buffer, since
/// `__shared__` itself stands for `static` there.
fn emulated(source: &str) -> String {
    source.replace("extern __shared__", "extern")
}

/// `THREADS_<kernel>` and `SMEM_<kernel>`: the block size and dynamic shared memory each kernel
/// of `modules` declares, which the runtime launches it with.
fn launch_defines(modules: &[&GpuSource]) -> String {
    modules
        .iter()
        .flat_map(|m| &m.kernels)
        .map(|k| {
            format!(
                "#define THREADS_{0} {1}u\n#define SMEM_{0} {2}\n",
                k.name, k.block_threads, k.dynamic_smem
            )
        })
        .collect()
}

struct Case {
    dim: usize,
    width: usize,
    precision: Precision,
    kind: KernelKind,
    bins: usize,
    n: [usize; 3],
    od_box: OdBox,
}

fn run_case(cxx: &str, dir: &Path, case: &Case) -> Result<String, String> {
    let kernel = KernelSpec::for_width(case.kind, case.width, Upsampling::TWO).unwrap();
    let spec = GpuSpreadSpec {
        dim: case.dim,
        kernel,
        precision: case.precision,
        bins: [case.bins; 3],
        max_subproblem: 5,
        od_box: case.od_box,
    };
    let spread = spread_module(&spec).map_err(|e| e.to_string())?;
    let common = common_module(case.precision).map_err(|e| e.to_string())?;
    let fit = kernel.horner().max_error;
    let bound = fit * 3.0
        + if case.precision == Precision::F32 {
            2e-6
        } else {
            1e-13
        };
    let npts = match case.dim {
        3 => 60,
        _ => 300,
    };
    let nbins: usize = (0..3).map(|d| case.n[d].div_ceil(spec.bins[d])).product();
    let defines = format!(
        "#define N0 {}\n#define N1 {}\n#define N2 {}\n#define NPTS {npts}\n#define BETA {:e}\n#define KIND_ES {}\n#define BOUND {:e}\n#define SUB_BOUND {}\n#define SET_SUB_BOUND {}\n#define MINMAX_BLOCKS {MINMAX_BLOCKS}u\n{}",
        case.n[0],
        case.n[1],
        case.n[2],
        kernel.beta,
        u8::from(case.kind == KernelKind::Es),
        bound,
        spec.subproblem_bound(npts, nbins),
        spec.subproblem_bound(npts, 3 * nbins),
        launch_defines(&[&common, &spread]),
    );
    let code = format!(
        "{HEADER}\n{}\n{}\n{defines}\n{SCAN_LAUNCH}\n{DRIVER}",
        emulated(&common.source),
        emulated(&spread.source)
    );
    let stem = format!("{}_b{}_{:?}", spread.name, case.bins, case.od_box);
    compile_and_run(cxx, dir, &stem, &code)
}

/// One wide-Gaussian module: `dim`, window `width` (odd) with shape `b` (`⌈2πb⌉ = width/2`),
/// on a grid of sides `n`.
struct GwCase {
    dim: usize,
    width: usize,
    b: f64,
    precision: Precision,
    n: [usize; 3],
}

/// Compiles and runs `code` (a module plus a driver) as `stem`; the driver prints its errors.
fn compile_and_run(cxx: &str, dir: &Path, stem: &str, code: &str) -> Result<String, String> {
    let src = dir.join(format!("{stem}.cpp"));
    let exe = dir.join(stem);
    std::fs::write(&src, code).map_err(|e| e.to_string())?;
    let out = Command::new(cxx)
        .args(["-O1", "-std=c++17", "-w", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "{stem}: C++ compile failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = Command::new(&exe).output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&run.stdout).to_string();
    if run.status.success() {
        Ok(format!("{stem}: {}", text.trim()))
    } else {
        Err(format!("{stem}: {}", text.trim()))
    }
}

fn run_gw_case(cxx: &str, dir: &Path, case: &GwCase) -> Result<String, String> {
    let module =
        gaussian_wide_module(case.dim, case.width, case.precision).map_err(|e| e.to_string())?;
    assert_eq!(
        (2.0 * std::f64::consts::PI * case.b).ceil() as usize,
        case.width / 2
    );
    let (npts, ntgt) = if case.dim == 3 { (30, 30) } else { (200, 150) };
    let defines = format!(
        "#define N0 {}\n#define N1 {}\n#define N2 {}\n#define NPTS {npts}\n#define NTGT {ntgt}\n#define SHAPE {:e}\n",
        case.n[0], case.n[1], case.n[2], case.b
    );
    let code = format!(
        "{HEADER}\n{}\n{defines}{}\n{GW_DRIVER}",
        emulated(&module.source),
        launch_defines(&[&module])
    );
    let stem = format!("{}_n{}", module.name, case.n[0]);
    compile_and_run(cxx, dir, &stem, &code)
}

/// The common module of `precision` with its own driver (prefix sums over many bins, the
/// bounding-interval reduction, type 3 factors and products).
fn run_common_case(cxx: &str, dir: &Path, precision: Precision) -> Result<String, String> {
    let common = common_module(precision).map_err(|e| e.to_string())?;
    let defines = format!(
        "#define NPTS 300\n#define SINGLE {}\n#define MINMAX_BLOCKS {MINMAX_BLOCKS}u\n{}",
        u8::from(precision == Precision::F32),
        launch_defines(&[&common]),
    );
    let code = format!(
        "{HEADER}\n{}\n{defines}\n{SCAN_LAUNCH}\n{COMMON_DRIVER}",
        emulated(&common.source)
    );
    compile_and_run(cxx, dir, &common.name, &code)
}

#[test]
fn common_kernels_match_the_host_on_the_cpu() {
    emulate(
        "-common",
        "common modules",
        &[Precision::F32, Precision::F64],
        |cxx, dir, &p| run_common_case(cxx, dir, p),
    );
}

#[test]
fn wide_gaussian_kernels_match_direct_gaussians_on_the_cpu() {
    let mut cases = Vec::new();
    // Width 19 (b = 1.4) and, in the long runs, 45 (b = 3.45, near the seed's 47 at 1e-10);
    // odd grid sizes, and in 1D a grid barely wider than the window, so that windows wrap on
    // both sides.
    let widths: &[(usize, f64)] =
        if long::long_tests("cuda_emulate: the wide-Gaussian modules of width 45") {
            &[(19, 1.4), (45, 3.45)]
        } else {
            &[(19, 1.4)]
        };
    for dim in 1..=3 {
        for &(width, b) in widths {
            for precision in [Precision::F32, Precision::F64] {
                let n = [2 * width + 5, 2 * width + 3, 2 * width + 1];
                let n = std::array::from_fn(|d| if d < dim { n[d] } else { 1 });
                cases.push(GwCase {
                    dim,
                    width,
                    b,
                    precision,
                    n,
                });
                if dim == 1 {
                    cases.push(GwCase {
                        dim,
                        width,
                        b,
                        precision,
                        n: [width + 2, 1, 1],
                    });
                }
            }
        }
    }
    emulate("-gw", "wide-Gaussian modules", &cases, run_gw_case);
}

#[test]
fn generated_kernels_match_direct_spreading_on_the_cpu() {
    let mut cases = Vec::new();
    // The narrowest, the default (1e-6) and the Gaussian widths; the long runs (CI) add 3, 13
    // and 16 (the widest).
    let long = long::long_tests("cuda_emulate: the spread modules of widths 3, 13 and 16");
    for dim in 1..=3 {
        for (width, kind) in [
            (2, KernelKind::Es),
            (3, KernelKind::Es),
            (7, KernelKind::Es),
            (8, KernelKind::Gaussian),
            (13, KernelKind::Es),
            (16, KernelKind::Es),
        ] {
            if !long && [3, 13, 16].contains(&width) {
                continue;
            }
            if dim == 3 && width > 13 {
                continue;
            }
            for precision in [Precision::F32, Precision::F64] {
                if precision == Precision::F32 && width > 8 {
                    continue;
                }
                // Odd sizes with partial last bins, and (1D) a bin wider than the grid.
                let n = [2 * width + 5, 2 * width + 3, 2 * width + 1];
                let n = std::array::from_fn(|d| if d < dim { n[d] } else { 1 });
                // 2D has both output-driven boxes; 1D only the shared one, 3D only pencils.
                let boxes = match dim {
                    1 => &[OdBox::Shared][..],
                    2 => &[OdBox::Shared, OdBox::Pencils][..],
                    _ => &[OdBox::Pencils][..],
                };
                for &od_box in boxes {
                    cases.push(Case {
                        dim,
                        width,
                        precision,
                        kind,
                        bins: 4,
                        n,
                        od_box,
                    });
                }
                if dim == 1 {
                    cases.push(Case {
                        dim,
                        width,
                        precision,
                        kind,
                        bins: 64,
                        n,
                        od_box: OdBox::Shared,
                    });
                }
            }
        }
    }
    emulate("", "emulated modules", &cases, run_case);
}

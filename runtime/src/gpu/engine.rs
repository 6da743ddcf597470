//! What a GPU plan executes on, one shape for every backend: a type 1/2 engine ([`Uniform`]:
//! a fine grid with its sorted points, the modes on it with the FFTs, a batch of work grids),
//! a type 3 engine ([`Type3`]: the outer grid its sources are spread on, an inner type 1/2
//! engine, the rescaled points and their phase factors), or the Gaussian type 3's
//! ([`Engine::Gaussian`]). A backend supplies the parts: its grid `G`, modes and FFTs `M`,
//! device arrays `B`.

use super::type3::Type3Points;
use crate::error::NudtError;
use nudt_gen::gpu::{gradient_methods, GpuMethod, GpuSpreadSpec, SubproblemFit};
use nudt_gen::KernelSpec;

/// What a [`SortedGrid`] is: its sides (1 for unused dimensions), its spread module's spec,
/// the methods chosen for the sorted points (spreading, interpolation; `None` before points
/// are set), and which subproblem kernels of the gradient passes the device runs.
pub(crate) type GridParts<'a> = (
    [usize; 3],
    &'a GpuSpreadSpec,
    Option<(GpuMethod, GpuMethod)>,
    SubproblemFit,
);

/// A fine grid with (once set) its sorted points.
pub(crate) trait SortedGrid {
    fn parts(&self) -> GridParts<'_>;

    fn sides(&self) -> [usize; 3] {
        self.parts().0
    }

    fn bins(&self) -> [usize; 3] {
        self.parts().1.bins
    }

    fn methods(&self) -> Option<(GpuMethod, GpuMethod)> {
        self.parts().2
    }

    /// The methods of a pass over the sorted points: the sort's (spreading, interpolation),
    /// or with `gradient` those of the gradient kernels, as the device runs them
    /// ([`gradient_methods`]); the typed error before points are set.
    fn pass_methods(&self, gradient: bool) -> Result<(GpuMethod, GpuMethod), NudtError> {
        let (_, _, methods, fit) = self.parts();
        let methods = methods.ok_or(NudtError::PointsNotSet)?;
        Ok(match gradient {
            false => methods,
            true => gradient_methods(methods, fit),
        })
    }
}

/// A type 1/2 engine (and type 3's inner one).
pub(crate) struct Uniform<G, M, B> {
    pub grid: G,
    /// The modes on the grid (their corrections) and the grid's FFTs.
    pub modes: M,
    /// One batch of fine grids.
    pub work: B,
}

/// A type 3 engine for one pair of point sets: sources spread on `spread` (at the rescaled
/// sources, pre-phased), that grid's values taken as the modes of a type 2 on `inner` (at
/// the rescaled targets), then the post-factors.
pub(crate) struct Type3<G, M, B> {
    /// The kernel its grids were made for.
    pub kernel: KernelSpec,
    pub spread: G,
    pub inner: Uniform<G, M, B>,
    pub points: Type3Points<B>,
    /// One batch of phased inputs (the forward's pre-phased strengths, M per transform; the
    /// adjoint's conjugate-post-factored values, K) and of outer grids.
    pub phased: B,
    pub agrid: B,
}

/// What a plan executes on, by the kind of plan and whether its points are set.
pub(crate) enum Engine<G, M, B, Gauss> {
    Uniform(Box<Uniform<G, M, B>>),
    /// A type 3 plan before its first point sets (its grids depend on them).
    Type3Pending,
    Type3(Box<Type3<G, M, B>>),
    /// The Gaussian-gridding type 3 ([`super::gaussian`]).
    Gaussian(Box<Gauss>),
}

/// A fine grid's engine with, for type 3, the rest of its engine (CUDA's stages' view).
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) type Staged<'a, G, M, B> = (&'a Uniform<G, M, B>, Option<&'a Type3<G, M, B>>);

impl<G, M, B, Gauss> Engine<G, M, B, Gauss> {
    /// The fine grid's engine (type 3: the inner one) and type 3's parts, for the engines
    /// that run the plan layer's stages (not the Gaussian type 3's, nor one waiting for its
    /// points).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub fn staged(&self) -> Option<Staged<'_, G, M, B>> {
        match self {
            Engine::Uniform(u) => Some((u, None)),
            Engine::Type3(t) => Some((&t.inner, Some(t))),
            Engine::Gaussian(_) | Engine::Type3Pending => None,
        }
    }
}

//! The entry points every backend's plan has, written once ([`plan_entry_points!`]): the
//! constructors, which hand the caller's request to the plan layer as a
//! [`crate::planner::Problem`], execute and its adjoint, and the gradient passes of types 1 and
//! 2 ([`crate::gradient`]), on host slices, whose lengths (and a gradient pass's direction) the
//! problem checks. A backend supplies what differs: `build` (the problem → its kernels and
//! buffers), `counts` (the sizes of each transform's point set, once set) and `execute_host`
//! (one checked run of a [`crate::planner::stages::Pass`]).

/// Expands, inside `impl<T: …> SomePlan<T>`, to `new`, `new_type3`, `execute`,
/// `execute_adjoint`, `interp_with_gradient`, `spread_with_gradient` and `check_io` for
/// options `$opts` (with `kernel`, `upsampling`, `type3` and `gradients` fields) and errors
/// `$err` (from [`crate::NudtError`]).
macro_rules! plan_entry_points {
    // The entry points that run one pass on host slices, `$input` → `$output` (and, for the
    // gradient passes, `$adjoint`): each checks its direction where it has one (whether
    // the pass `$interp`olates), then runs `$pass` through the backend's `execute_host`.
    (@host $err:ty; $(
        $(#[$doc:meta])*
        $name:ident($input:ident, $output:ident $(, $adjoint:ident; interpolates: $interp:literal)?)
            => $pass:expr;
    )*) => {$(
        $(#[$doc])*
        pub fn $name(
            &mut self,
            $input: &[num_complex::Complex<T>],
            $output: &mut [num_complex::Complex<T>],
            $($adjoint: bool,)?
        ) -> std::result::Result<(), $err> {
            $(crate::gradient::check_direction(self.problem.ty, $adjoint, $interp)?;)?
            self.execute_host($input, $output, $pass)
        }
    )*};
    ($opts:ty, $err:ty) => {
        /// Makes a type 1 or 2 plan with `modes[d]` modes along dimension d. `isign` is ±1;
        /// `ntransf` transforms share the points (and their sort), or on the CPU have a set
        /// each (`set_points_per_transform`).
        pub fn new(
            ty: nudt_gen::TransformType,
            modes: &[usize],
            isign: i32,
            ntransf: usize,
            tol: f64,
            opts: $opts,
        ) -> std::result::Result<Self, $err> {
            let problem = |c| crate::planner::Problem::uniform(ty, modes, isign, ntransf, tol, c);
            Self::from_problem(opts, problem)
        }

        /// Makes a type 3 plan in `dim` dimensions; its grids are planned by
        /// `set_points_type3`, from the extents of the points.
        pub fn new_type3(
            dim: usize,
            isign: i32,
            ntransf: usize,
            tol: f64,
            opts: $opts,
        ) -> std::result::Result<Self, $err> {
            let problem = |c| crate::planner::Problem::type3(dim, isign, ntransf, tol, c);
            Self::from_problem(opts, problem)
        }

        /// The plan of the problem `problem` poses with what the options choose for the plan
        /// layer (in the plan's precision). The plan layer's checks come first, so that bad
        /// input is refused before any device is opened (and wherever one is missing).
        fn from_problem(
            opts: $opts,
            problem: impl FnOnce(crate::planner::Choices) -> crate::Result<crate::planner::Problem>,
        ) -> std::result::Result<Self, $err> {
            let (kernel, upsampling, type3) = (opts.kernel, opts.upsampling, opts.type3);
            let gradients = opts.gradients;
            let choices =
                crate::planner::Choices::new(T::PRECISION, kernel, upsampling, type3, gradients);
            let problem = problem(choices)?;
            crate::planner::sigma::initial_kernel(&problem)?;
            Self::build(problem, opts)
        }

        crate::entry::plan_entry_points! { @host $err;
            /// Runs the plan's transform on `ntransf` stacked inputs. Type 1: strengths (M each)
            /// → modes; type 2: modes → values at the points (M each); type 3: strengths (M each)
            /// → values at the targets (K each). With a point set per transform, M and K are
            /// each transform's own ([`Self::point_counts`]).
            execute(input, output) => crate::planner::stages::Pass::transform(false);

            /// The adjoint, input shaped as [`Self::execute`]'s output and back, with the
            /// opposite sign: type 1's is a type 2, type 2's a type 1, and type 3's maps values at
            /// the targets back to the sources. It runs the adjoint of each step on the forward's
            /// own grids and sorted points: the forward's cost and accuracy, no second plan.
            execute_adjoint(input, output) => crate::planner::stages::Pass::transform(true);

            /// A type 2 with its gradient (this type 2 plan's forward, or with `adjoint` this type
            /// 1 plan's adjoint): per transform and point `dim + 1` values in `out`, the
            /// interpolant `u(x_j)` and its derivatives `∂u/∂x_d(x_j)` (per radian) of
            /// `u(x) = Σ_k f_k e^{±i k·x}`, in one interpolation pass with the kernel's
            /// derivative beside the kernel. What [`crate::gradient`] differentiates types 1 and
            /// 2 with.
            interp_with_gradient(modes, out, adjoint; interpolates: true)
                => crate::planner::stages::Pass::gradient(adjoint);

            /// A type 1 (this type 1 plan's forward, or with `adjoint` this type 2 plan's
            /// adjoint) of values and derivative weights, `dim + 1` a point `(v_j, u_j)`:
            /// `f_k = Σ_j (v_j ± i k·u_j) e^{±i k·x_j}`, in one spreading pass of
            /// `v·W + Σ_d u_d·∂W/∂x_d` with each point's kernel weights `W`: the transpose of
            /// [`Self::interp_with_gradient`].
            spread_with_gradient(vu, modes, adjoint; interpolates: false)
                => crate::planner::stages::Pass::gradient(adjoint);
        }

        /// Per transform, the size of its point set: points (type 3: sources) and targets
        /// (0 for types 1 and 2), `ntransf` pairs, equal where the transforms share their
        /// points; `None` before points are set. Execute's input and output are the
        /// concatenations of the transforms' arrays of these sizes.
        pub fn point_counts(&self) -> Option<Vec<(usize, usize)>> {
            self.counts()
        }

        /// Each transform's input and output lengths in one run of `pass` (the transform, the
        /// adjoint, a gradient pass), for `input` and `output` values in all, or the typed
        /// error: points not set, or lengths that are not the sum of the transforms'.
        // `?` converts the plan layer's error into the backend's (the CPU's is the same type).
        #[allow(clippy::needless_question_mark)]
        fn check_io(
            &self,
            input: usize,
            output: usize,
            pass: crate::planner::stages::Pass,
        ) -> std::result::Result<Vec<(usize, usize)>, $err> {
            let counts = self.counts().ok_or(crate::NudtError::PointsNotSet)?;
            Ok(self.problem.check_io(&counts, [input, output], pass)?)
        }
    };
}
pub(crate) use plan_entry_points;

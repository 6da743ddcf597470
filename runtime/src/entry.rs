//! The entry points every backend's plan has, written once ([`plan_entry_points!`]): the
//! constructors, which hand the caller's request to the plan layer as a
//! [`crate::planner::Problem`], and execute and its adjoint on host slices, whose lengths the
//! problem checks. A backend supplies what differs: `build` (the problem → its kernels and
//! buffers), `counts` (the sizes of each transform's point set, once set) and `execute_host`
//! (one checked run).

/// Expands, inside `impl<T: …> SomePlan<T>`, to `new`, `new_type3`, `execute`,
/// `execute_adjoint` and `check_io` for options `$opts` (with `kernel`, `upsampling` and
/// `type3` fields) and errors `$err` (from [`crate::NudtError`]).
macro_rules! plan_entry_points {
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
            let choices = Self::choices(&opts);
            let problem =
                crate::planner::Problem::uniform(ty, modes, isign, ntransf, tol, choices)?;
            Self::build(problem, opts)
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
            let choices = Self::choices(&opts);
            Self::build(
                crate::planner::Problem::type3(dim, isign, ntransf, tol, choices)?,
                opts,
            )
        }

        /// What the options choose for the plan layer, in the plan's precision.
        fn choices(opts: &$opts) -> crate::planner::Choices {
            let (kernel, upsampling, type3) = (opts.kernel, opts.upsampling, opts.type3);
            crate::planner::Choices::new(T::PRECISION, kernel, upsampling, type3, opts.gradients)
        }

        /// Runs the plan's transform on `ntransf` stacked inputs. Type 1: strengths (M each)
        /// → modes; type 2: modes → values at the points (M each); type 3: strengths (M each)
        /// → values at the targets (K each). With a point set per transform, M and K are
        /// each transform's own ([`Self::point_counts`]).
        pub fn execute(
            &mut self,
            input: &[num_complex::Complex<T>],
            output: &mut [num_complex::Complex<T>],
        ) -> std::result::Result<(), $err> {
            self.execute_host(input, output, false)
        }

        /// The adjoint, input shaped as [`Self::execute`]'s output and back, with the
        /// opposite sign: type 1's is a type 2, type 2's a type 1, and type 3's maps values at
        /// the targets back to the sources. It runs the adjoint of each step on the forward's
        /// own grids and sorted points: the forward's cost and accuracy, no second plan.
        pub fn execute_adjoint(
            &mut self,
            input: &[num_complex::Complex<T>],
            output: &mut [num_complex::Complex<T>],
        ) -> std::result::Result<(), $err> {
            self.execute_host(input, output, true)
        }

        /// Per transform, the size of its point set: points (type 3: sources) and targets
        /// (0 for types 1 and 2), `ntransf` pairs, equal where the transforms share their
        /// points; `None` before points are set. Execute's input and output are the
        /// concatenations of the transforms' arrays of these sizes.
        pub fn point_counts(&self) -> Option<Vec<(usize, usize)>> {
            self.counts()
        }

        /// Each transform's input and output lengths, for `input` and `output` values in all
        /// (the transforms', or with `adjoint` their adjoints'), or the typed error: points
        /// not set, or lengths that are not the sum of the transforms'.
        // `?` converts the plan layer's error into the backend's (the CPU's is the same type).
        #[allow(clippy::needless_question_mark)]
        fn check_io(
            &self,
            input: usize,
            output: usize,
            adjoint: bool,
        ) -> std::result::Result<Vec<(usize, usize)>, $err> {
            let counts = self.counts().ok_or(crate::NudtError::PointsNotSet)?;
            Ok(self.problem.check_io(&counts, [input, output], adjoint)?)
        }
    };
}
pub(crate) use plan_entry_points;

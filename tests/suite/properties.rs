//! Property tests: random small problems of every type stay within 10·tol of the direct sum.

use crate::common;

use common::{type12_error, type3_error, Rng};
use nudt::Options;
use nudt::TransformType::{Type1, Type2};
use proptest::prelude::*;

fn setup() -> impl Strategy<Value = (usize, Vec<usize>, usize, i32, f64, u64)> {
    (1usize..=3).prop_flat_map(|dim| {
        (
            Just(dim),
            proptest::collection::vec(1usize..=18, dim),
            0usize..=150,
            prop_oneof![Just(-1), Just(1)],
            (3i32..=11).prop_map(|e| 10f64.powi(-e)),
            any::<u64>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_problems_meet_the_tolerance((dim, modes, m, isign, tol, seed) in setup()) {
        let mut rng = Rng::new(seed);
        let x = rng.coords(dim, m, -10.0, 10.0);
        let c = rng.complexes(m);
        let f = rng.complexes(modes.iter().product());
        // Type 3 grids grow with the space-bandwidth product: keep it moderate.
        let x3 = rng.coords(dim, m, -4.0, 3.0);
        let s = rng.coords(dim, 40, -9.0, 7.0);
        let e1 = type12_error::<f64>(Type1, &x, &c, &modes, isign, tol, Options::default());
        let e2 = type12_error::<f64>(Type2, &x, &f, &modes, isign, tol, Options::default());
        let e3 = type3_error::<f64>(&x3, &c, &s, isign, tol, Options::default());
        prop_assert!(e1 <= 10.0 * tol, "type 1: {e1:e}");
        prop_assert!(e2 <= 10.0 * tol, "type 2: {e2:e}");
        prop_assert!(e3 <= 10.0 * tol, "type 3: {e3:e}");
    }
}

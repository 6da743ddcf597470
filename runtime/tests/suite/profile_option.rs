//! `Options::profile`: a tuning profile file handed to a plan changes what the planner leaves
//! open (σ, tile side, schedule), and so the plan's recipe; a file that is no profile is a
//! typed error naming it.
//! ```sh
//! cargo test --release -p nudt-runtime --test suite profile_option::
//! ```

use nudt_runtime::{NudtError, Options, Plan, TransformType};
use std::path::PathBuf;

/// A profile as `nudt tune -o FILE` saves it, for a machine that is not this one, choosing
/// σ = 1.5, tiles of 32 and the target-driven schedule in 2-D.
const PROFILE: &str = r#"format = 1
nudt = "0.1.0"
machine = "some-other-machine"
created_unix = 1
quick = true
threads = 2
tol = 1e-6
precision = "f64"

[arch]
cores = 2
l1 = 49152
l2 = 2097152
l3 = 33554432
simd_bytes = 32

[[choice]]
dim = 2
strategy = "target-driven"
tile_side = 32
upsampfac = 1.5
seconds = 0.1
default_seconds = 0.12
default_tile_side = 64
"#;

fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nudt-profile-option-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn plan(opts: Options) -> Result<Plan<f64>, NudtError> {
    Plan::<f64>::new(TransformType::Type1, &[40, 30], 1, 1, 1e-6, opts)
}

#[test]
fn a_profile_file_changes_the_recipe() {
    let path = file("tuned.toml", PROFILE);
    let untuned = Options {
        use_profile: false,
        ..Options::default()
    };
    let plain = plan(untuned.clone()).unwrap();
    let tuned = plan(Options {
        profile: Some(path.clone()),
        ..untuned.clone()
    })
    .unwrap();
    let (a, b) = (plain.recipe(), tuned.recipe());
    assert_eq!(a.kernel.upsampling.0, 2.0, "{a:?}");
    assert_eq!(b.kernel.upsampling.0, 1.5, "{b:?}");
    assert!(b.kernel.width > a.kernel.width, "{a:?}\n{b:?}");
    assert_eq!(a.fine_grid, [80, 60]);
    assert_eq!(b.fine_grid, [60, 45]);
    assert_ne!(a, b);
    assert_eq!(tuned.tile_side(), 32);
    assert_eq!(tuned.profile(), Some(path.as_path()));
    assert_eq!(plain.profile(), None);

    // Fields set in the options still win over the profile's choice.
    let fixed = plan(Options {
        profile: Some(path.clone()),
        upsampling: Some(nudt_runtime::Upsampling(2.0)),
        ..untuned.clone()
    })
    .unwrap();
    assert_eq!(fixed.recipe().kernel, a.kernel);

    // A 1-D plan: the profile has no choice for it, and the recipe is the planner's own.
    let one = Plan::<f64>::new(
        TransformType::Type1,
        &[40],
        1,
        1,
        1e-6,
        Options {
            profile: Some(path),
            ..untuned.clone()
        },
    )
    .unwrap();
    assert_eq!(one.recipe().kernel.upsampling.0, 2.0);
    assert_eq!(one.profile(), None);
}

#[test]
fn a_bad_profile_file_is_a_typed_error() {
    let missing = std::env::temp_dir().join("nudt-no-such-profile.toml");
    let bad = file("bad.toml", "this is not a profile");
    for (path, phrase) in [(missing, "cannot read"), (bad, "not a nudt tuning profile")] {
        let e = plan(Options {
            profile: Some(path.clone()),
            ..Options::default()
        })
        .expect_err("refused");
        assert!(matches!(e, NudtError::Profile { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(&path.display().to_string()) && msg.contains(phrase),
            "{msg}"
        );
    }
}

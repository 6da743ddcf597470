//! Tuning profiles on the command line: reading one named by `--profile` (with errors that
//! name the file), and saving what `nudt tune` chose over what an earlier run saved. The
//! format, and the lookup plans do by themselves, live in `nudt::profile`.

use super::{fail, write_atomic, Result};
pub use nudt::profile::{default_path, Choice, Profile, Trial, FORMAT};
use std::path::Path;

/// Reads and checks the profile at `path` (for `--profile`).
pub fn load(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| fail!("--profile {}: cannot read: {e}", path.display()))?;
    Profile::parse(&text).map_err(|e| fail!("--profile {}: {e}", path.display()))
}

/// Makes the profile at `path` (given as `option`: `--profile`, or `NUDT_PROFILE` from the
/// environment) the one this process's plans read, after checking that it is a profile of
/// this machine: plans skip a foreign or broken one silently, which is right for the cache
/// folder but would hide a mistake in a file the user named.
pub fn use_file(path: &Path, option: &str) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| fail!("{option} {}: cannot read: {e}", path.display()))?;
    let p = Profile::parse(&text).map_err(|e| fail!("{option} {}: {e}", path.display()))?;
    let here = nudt::plan::this_machine().key();
    if p.machine != here {
        return Err(fail!(
            "{option} {}: tuned for another machine ({}); this one is {here}, so run `nudt tune` here",
            path.display(),
            p.machine
        ));
    }
    let path =
        std::fs::canonicalize(path).map_err(|e| fail!("{option} {}: {e}", path.display()))?;
    // Plans read the variable once, at their first plan; nothing has planned or started a
    // thread yet, and the child processes of `nudt bench` inherit it.
    std::env::set_var(nudt::profile::PROFILE_ENV, path);
    Ok(())
}

/// `--profile FILE` of `transform` and `bench`, else a `NUDT_PROFILE` set in the environment:
/// checked and made the profile plans read (see [`use_file`]).
pub fn use_given(file: Option<&Path>) -> Result<()> {
    let env = nudt::profile::PROFILE_ENV;
    match (file, std::env::var_os(env).filter(|v| !v.is_empty())) {
        (Some(f), _) => use_file(f, "--profile"),
        (None, Some(v)) => use_file(Path::new(&v), env),
        (None, None) => Ok(()),
    }
}

/// What [`merge_existing`] did with the file already at the destination.
#[derive(Debug, PartialEq)]
pub enum Merged {
    /// Nothing to keep: no file, or one whose every dimension was tuned again.
    Fresh,
    /// This machine's profile: the choices and trials of these dimensions, not tuned in this
    /// run, were kept.
    Kept(Vec<usize>),
    /// Not a profile of this machine (the reason): it is replaced whole.
    Replaced(String),
}

/// Folds the profile at `path` into `new`, the result of a run that tuned only some
/// dimensions, so that `nudt tune --dims 3` does not lose the 1-D and 2-D choices: the
/// dimensions `new` has no choice for keep their choices and trials from the existing
/// profile, when that profile is this machine's (`new.machine`). The header fields (threads,
/// quick, the date) become this run's.
pub fn merge_existing(new: &mut Profile, path: &Path) -> Merged {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Merged::Fresh,
        Err(e) => return Merged::Replaced(format!("cannot read it ({e})")),
    };
    let old = match Profile::parse(&text) {
        Ok(p) => p,
        Err(e) => return Merged::Replaced(e),
    };
    if old.machine != new.machine {
        return Merged::Replaced(format!(
            "it was tuned for another machine ({})",
            old.machine
        ));
    }
    let tuned: Vec<usize> = new.choice.iter().map(|c| c.dim).collect();
    let kept: Vec<usize> = old
        .choice
        .iter()
        .map(|c| c.dim)
        .filter(|d| !tuned.contains(d))
        .collect();
    new.choice
        .extend(old.choice.into_iter().filter(|c| kept.contains(&c.dim)));
    new.trial
        .extend(old.trial.into_iter().filter(|t| !tuned.contains(&t.dim)));
    new.choice.sort_by_key(|c| c.dim);
    new.trial.sort_by_key(|t| t.dim);
    if kept.is_empty() {
        Merged::Fresh
    } else {
        Merged::Kept(kept)
    }
}

/// Writes `profile` to `path` atomically, creating its directory.
pub fn save(profile: &Profile, path: &Path) -> Result<()> {
    save_text(&profile.to_toml().map_err(|e| fail!("profile: {e}"))?, path)
}

/// Writes a profile's TOML `text` (the CPU's or a GPU's) to `path` atomically, creating its
/// directory.
pub fn save_text(text: &str, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir)
                .map_err(|e| fail!("profile directory {}: {e}", dir.display()))?;
        }
    }
    write_atomic(path, "profile", |w| {
        std::io::Write::write_all(w, text.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(machine: &str, dims: &[usize]) -> Profile {
        let choice = |dim| Choice {
            dim,
            strategy: "source-driven".into(),
            tile_side: 32,
            upsampfac: 2.0,
            seconds: dim as f64,
            default_seconds: 1.0,
            default_tile_side: 64,
        };
        Profile {
            format: FORMAT,
            nudt: "0.0.0".into(),
            machine: machine.into(),
            created_unix: 1,
            quick: true,
            threads: 1,
            tol: 1e-6,
            precision: "f64".into(),
            arch: (&nudt::gen::Arch::default()).into(),
            choice: dims.iter().map(|&d| choice(d)).collect(),
            trial: Vec::new(),
        }
    }

    #[test]
    fn merging_keeps_untuned_dimensions_of_the_same_machine_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        let mut new = profile("m", &[3]);
        assert_eq!(merge_existing(&mut new, &path), Merged::Fresh);

        save(&profile("m", &[1, 3]), &path).unwrap();
        let mut new = profile("m", &[3]);
        new.choice[0].seconds = 9.0;
        assert_eq!(merge_existing(&mut new, &path), Merged::Kept(vec![1]));
        let dims: Vec<(usize, f64)> = new.choice.iter().map(|c| (c.dim, c.seconds)).collect();
        assert_eq!(dims, vec![(1, 1.0), (3, 9.0)]);

        save(&profile("elsewhere", &[1]), &path).unwrap();
        let mut new = profile("m", &[3]);
        let Merged::Replaced(why) = merge_existing(&mut new, &path) else {
            panic!("a foreign profile is replaced");
        };
        assert!(why.contains("elsewhere"), "{why}");
        assert_eq!(new.choice.len(), 1);
    }
}

//! Tuning profiles: what `nudt tune` measured and chose on one machine, as TOML under the
//! user's cache directory (`$XDG_CACHE_HOME/nudt/<machine key>.toml`, else
//! `~/.cache/nudt/...`), or any file `$NUDT_PROFILE` names ([`PROFILE_ENV`]: where
//! `nudt tune -o FILE` saved one). Plans for this machine read that profile once per process
//! and take its choices for whatever their options leave to the planner
//! ([`crate::Options::use_profile`]); a plan given a profile file ([`crate::Options::profile`])
//! takes that one's instead, and `nudt gen --profile FILE` reads any profile.

use crate::error::NudtError;
use crate::plan::this_machine;
use nudt_gen::{Arch, Strategy, Upsampling};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable that names the profile plans read instead of the cache folder's:
/// a profile saved elsewhere (`nudt tune -o FILE`), or one shared between machines of the
/// same model. `nudt transform --profile FILE` and `nudt bench --profile FILE` set it.
pub const PROFILE_ENV: &str = "NUDT_PROFILE";

/// Version of the profile layout; bumped on incompatible changes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Profile {
    pub format: u32,
    /// nudt version that wrote it.
    pub nudt: String,
    /// `Arch::key()` of the machine it was tuned on.
    pub machine: String,
    pub created_unix: u64,
    pub quick: bool,
    pub threads: usize,
    /// Tolerance and precision of the representative problems.
    pub tol: f64,
    pub precision: String,
    pub arch: ArchEntry,
    /// One choice per dimension tuned.
    #[serde(default)]
    pub choice: Vec<Choice>,
    /// Every configuration timed, for the record.
    #[serde(default)]
    pub trial: Vec<Trial>,
}

/// The machine, field by field (bytes).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ArchEntry {
    pub cores: usize,
    pub l1: usize,
    pub l2: usize,
    pub l3: usize,
    pub simd_bytes: usize,
}

impl From<&Arch> for ArchEntry {
    fn from(a: &Arch) -> Self {
        ArchEntry {
            cores: a.cores,
            l1: a.l1,
            l2: a.l2,
            l3: a.l3,
            simd_bytes: a.simd_bytes,
        }
    }
}

impl From<&ArchEntry> for Arch {
    fn from(a: &ArchEntry) -> Self {
        Arch {
            cores: a.cores,
            l1: a.l1,
            l2: a.l2,
            l3: a.l3,
            simd_bytes: a.simd_bytes,
        }
    }
}

/// What was chosen for one dimension, and the numbers behind it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Choice {
    pub dim: usize,
    /// "source-driven" or "target-driven".
    pub strategy: String,
    pub tile_side: usize,
    pub upsampfac: f64,
    /// Seconds (type 1 + type 2, plan + setpts + execute) of the choice...
    pub seconds: f64,
    /// ...and of the planner's defaults on the same problems.
    pub default_seconds: f64,
    pub default_tile_side: usize,
}

impl Choice {
    /// The chosen schedule (validated by [`Profile::parse`]).
    pub fn strategy(&self) -> Strategy {
        if self.strategy == "target-driven" {
            Strategy::TargetDriven
        } else {
            Strategy::SourceDriven
        }
    }

    pub fn upsampling(&self) -> Upsampling {
        Upsampling(self.upsampfac)
    }
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Trial {
    pub dim: usize,
    #[serde(rename = "type")]
    pub ty: u8,
    pub strategy: String,
    pub tile_side: usize,
    pub upsampfac: f64,
    pub width: usize,
    pub seconds: f64,
}

impl Profile {
    pub fn choice(&self, dim: usize) -> Option<&Choice> {
        self.choice.iter().find(|c| c.dim == dim)
    }

    /// Reads a profile from TOML and checks what plans would act on; the error says what is
    /// wrong, for the caller to put in front of the file's name.
    pub fn parse(text: &str) -> Result<Profile, String> {
        let p: Profile = toml::from_str(text)
            .map_err(|e| format!("not a nudt tuning profile ({})", e.message().trim()))?;
        if p.format != FORMAT {
            return Err(format!(
                "profile format {} is not supported (expected {FORMAT}); run `nudt tune` again",
                p.format
            ));
        }
        for c in &p.choice {
            if c.strategy != "source-driven" && c.strategy != "target-driven" {
                return Err(format!(
                    "dim {}: strategy must be \"source-driven\" or \"target-driven\", got \"{}\"",
                    c.dim, c.strategy
                ));
            }
            if Upsampling::new(c.upsampfac).is_err() {
                return Err(format!(
                    "dim {}: upsampfac must be between 1.25 and 2.5, got {}",
                    c.dim, c.upsampfac
                ));
            }
            if c.tile_side == 0 {
                return Err(format!("dim {}: tile_side must be positive", c.dim));
            }
        }
        Ok(p)
    }

    /// The profile as TOML, behind a comment naming the machine.
    pub fn to_toml(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# nudt tuning profile for {} — written by `nudt tune`. Plans on this machine read \
             it from the cache folder (where `nudt tune` saves by default) or from wherever \
             NUDT_PROFILE (`nudt transform|bench --profile FILE`) names it; `nudt gen \
             --profile FILE` bakes it into source.\n\n{body}",
            self.machine
        ))
    }
}

/// Reads and checks the profile at `path` ([`crate::Options::profile`]); an unreadable file
/// or one that is no profile is [`NudtError::Profile`], naming the file.
pub fn read(path: &Path) -> Result<Profile, NudtError> {
    let err = |why: String| NudtError::Profile {
        path: path.display().to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
    Profile::parse(&text).map_err(err)
}

/// `$XDG_CACHE_HOME/nudt`, else `~/.cache/nudt`.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("nudt"))
}

/// Where a GPU backend keeps its compiled modules between runs: `$<env>` (`off` or empty
/// disables the disk cache), else `cache_dir()/<sub>`.
pub fn module_cache_dir(env: &str, sub: &str) -> Option<PathBuf> {
    match std::env::var_os(env) {
        Some(v) if v == "off" || v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => cache_dir().map(|d| d.join(sub)),
    }
}

/// Writes `bytes` to `path` in a module cache, best effort and atomically (a temporary file
/// renamed over it), so that a reader never sees half a file. Nothing is written for no
/// bytes; a failure leaves the cache as it was (the caches are an optimisation).
pub fn store_cached(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if bytes.is_empty() || std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Where the profile of `arch` lives by default.
pub fn default_path(arch: &Arch) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("{}.toml", arch.key())))
}

/// Where plans look for the profile of `arch`: `$NUDT_PROFILE` when set and not empty, else
/// [`default_path`].
pub fn lookup_path(arch: &Arch) -> Option<PathBuf> {
    std::env::var_os(PROFILE_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| default_path(arch))
}

/// This machine's profile and its path ([`lookup_path`]), read once per process. A missing,
/// unreadable, invalid or foreign profile (tuned for another machine key) counts as none: a
/// plan then plans by its own rules, exactly as if `nudt tune` had never run.
pub fn this_machines() -> Option<(&'static Path, &'static Profile)> {
    static PROFILE: OnceLock<Option<(PathBuf, Profile)>> = OnceLock::new();
    PROFILE
        .get_or_init(|| {
            let arch = this_machine();
            let path = lookup_path(arch)?;
            let text = std::fs::read_to_string(&path).ok()?;
            let p = Profile::parse(&text).ok()?;
            (p.machine == arch.key()).then_some((path, p))
        })
        .as_ref()
        .map(|(path, p)| (path.as_path(), p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Profile {
        Profile {
            format: FORMAT,
            nudt: "0.1.0".into(),
            machine: "m".into(),
            created_unix: 1,
            quick: true,
            threads: 2,
            tol: 1e-6,
            precision: "f64".into(),
            arch: (&Arch::default()).into(),
            choice: vec![Choice {
                dim: 2,
                strategy: "source-driven".into(),
                tile_side: 64,
                upsampfac: 2.0,
                seconds: 0.1,
                default_seconds: 0.12,
                default_tile_side: 136,
            }],
            trial: vec![Trial {
                dim: 2,
                ty: 1,
                strategy: "target-driven".into(),
                tile_side: 64,
                upsampfac: 1.25,
                width: 10,
                seconds: 0.2,
            }],
        }
    }

    #[test]
    fn round_trips_through_toml() {
        let p = sample();
        assert_eq!(Profile::parse(&p.to_toml().unwrap()).unwrap(), p);
    }

    #[test]
    fn bad_choices_are_refused_by_name() {
        let mut p = sample();
        p.choice[0].strategy = "sideways".into();
        let e = Profile::parse(&p.to_toml().unwrap()).unwrap_err();
        assert!(e.contains("strategy") && e.contains("sideways"), "{e}");
        let mut p = sample();
        p.choice[0].upsampfac = 3.0;
        assert!(Profile::parse(&p.to_toml().unwrap())
            .unwrap_err()
            .contains("upsampfac"));
        assert!(Profile::parse("format = 1\n").is_err());
    }
}

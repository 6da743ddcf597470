//! Tuning profiles: what `nudt tune` measured and chose on one machine, as TOML under the
//! user's cache directory (`$XDG_CACHE_HOME/nudt/<machine key>.toml`, else `~/.cache/nudt/...`).
//! `nudt gen --profile FILE` reads them.

use super::{fail, write_atomic, Result};
use nudt::gen::Arch;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

    pub fn load(path: &Path) -> Result<Profile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail!("--profile {}: cannot read: {e}", path.display()))?;
        let p: Profile = toml::from_str(&text).map_err(|e| {
            fail!(
                "--profile {}: not a nudt tuning profile ({})",
                path.display(),
                e.message().trim()
            )
        })?;
        if p.format != FORMAT {
            return Err(fail!(
                "--profile {}: profile format {} is not supported (expected {FORMAT}); run `nudt tune` again",
                path.display(),
                p.format
            ));
        }
        for c in &p.choice {
            if c.strategy != "source-driven" && c.strategy != "target-driven" {
                return Err(fail!(
                    "--profile {}: dim {}: strategy must be \"source-driven\" or \"target-driven\", got \"{}\"",
                    path.display(),
                    c.dim,
                    c.strategy
                ));
            }
            if c.upsampfac != 2.0 && c.upsampfac != 1.25 {
                return Err(fail!(
                    "--profile {}: dim {}: upsampfac must be 2 or 1.25, got {}",
                    path.display(),
                    c.dim,
                    c.upsampfac
                ));
            }
        }
        Ok(p)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let body = toml::to_string(self).map_err(|e| fail!("profile: {e}"))?;
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| fail!("profile directory {}: {e}", dir.display()))?;
            }
        }
        let text = format!(
            "# nudt tuning profile for {} — written by `nudt tune`, read by `nudt gen --profile`.\n\n{body}",
            self.machine
        );
        write_atomic(path, "profile", |w| {
            std::io::Write::write_all(w, text.as_bytes())
        })
    }
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

/// Where the profile of `arch` lives by default.
pub fn default_path(arch: &Arch) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("{}.toml", arch.key())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_toml() {
        let p = Profile {
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
        };
        let s = toml::to_string(&p).unwrap();
        assert_eq!(toml::from_str::<Profile>(&s).unwrap(), p);
    }
}

//! Tuning profiles on the command line: reading one named by `--profile` (with errors that
//! name the file) and saving what `nudt tune` chose. The format, and the lookup plans do by
//! themselves, live in `nudt::profile`.

use super::{fail, write_atomic, Result};
pub use nudt::profile::{default_path, Choice, Profile, Trial, FORMAT};
use std::path::Path;

/// Reads and checks the profile at `path` (for `--profile`).
pub fn load(path: &Path) -> Result<Profile> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| fail!("--profile {}: cannot read: {e}", path.display()))?;
    Profile::parse(&text).map_err(|e| fail!("--profile {}: {e}", path.display()))
}

/// Writes `profile` to `path` atomically, creating its directory.
pub fn save(profile: &Profile, path: &Path) -> Result<()> {
    let text = profile.to_toml().map_err(|e| fail!("profile: {e}"))?;
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

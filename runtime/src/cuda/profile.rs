//! CUDA tuning profiles: what `nudt tune --backend cuda` measured and chose on one GPU model,
//! as TOML beside the CPU profiles (`cache_dir()/cuda-<gpu key>.toml`). A plan for that GPU
//! reads it once per process and takes its bins and method for whatever its options leave to
//! the planner ([`super::CudaOptions::use_profile`]); types 1 and 2 only, since type 3 sizes
//! its grids from the points.

use crate::profile::cache_dir;
use nudt_gen::gpu::{GpuArch, GpuMethod};
use nudt_gen::{Precision, TransformType};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Version of the profile layout; bumped on incompatible changes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CudaProfile {
    pub format: u32,
    /// nudt version that wrote it.
    pub nudt: String,
    /// [`gpu_key`] of the GPU it was tuned on.
    pub gpu: String,
    pub created_unix: u64,
    pub quick: bool,
    /// One choice per (dimension, type, precision) tuned.
    #[serde(default)]
    pub choice: Vec<CudaChoice>,
    /// Every configuration timed, for the record.
    #[serde(default)]
    pub trial: Vec<CudaTrial>,
}

/// What was chosen for one kind of plan, and the numbers behind it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CudaChoice {
    pub dim: usize,
    #[serde(rename = "type")]
    pub ty: u8,
    /// "f32" or "f64".
    pub precision: String,
    /// The spreading (type 1) or interpolation (type 2) method: "gm-sort", "sm" or
    /// "output-driven".
    pub method: String,
    /// Bin sides, one per dimension.
    pub bins: Vec<usize>,
    /// GPU milliseconds (set-points + execute) of the choice...
    pub ms: f64,
    /// ...and of the planner's defaults on the same problem.
    pub default_ms: f64,
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CudaTrial {
    pub dim: usize,
    #[serde(rename = "type")]
    pub ty: u8,
    pub precision: String,
    pub method: String,
    pub bins: Vec<usize>,
    pub setpts_ms: f64,
    pub execute_ms: f64,
}

/// The method called `name` ([`GpuMethod::name`]).
pub fn method_named(name: &str) -> Option<GpuMethod> {
    [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven]
        .into_iter()
        .find(|m| m.name() == name)
}

impl CudaChoice {
    /// The chosen method (validated by [`CudaProfile::parse`]).
    pub fn method(&self) -> GpuMethod {
        method_named(&self.method).unwrap_or(GpuMethod::GmSort)
    }

    /// The chosen bin sides as the plan options take them.
    pub fn bins(&self) -> [usize; 3] {
        std::array::from_fn(|d| self.bins.get(d).copied().unwrap_or(1))
    }
}

fn precision_name(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    }
}

impl CudaProfile {
    /// The choice for `dim`-D plans of type `ty` in `precision`.
    pub fn choice(
        &self,
        dim: usize,
        ty: TransformType,
        precision: Precision,
    ) -> Option<&CudaChoice> {
        let t = match ty {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
            TransformType::Type3 => return None,
        };
        self.choice
            .iter()
            .find(|c| c.dim == dim && c.ty == t && c.precision == precision_name(precision))
    }

    /// Reads a profile from TOML and checks what plans would act on; the error says what is
    /// wrong, for the caller to put in front of the file's name.
    pub fn parse(text: &str) -> Result<CudaProfile, String> {
        let p: CudaProfile = toml::from_str(text)
            .map_err(|e| format!("not a nudt CUDA tuning profile ({})", e.message().trim()))?;
        if p.format != FORMAT {
            return Err(format!(
                "CUDA profile format {} is not supported (expected {FORMAT}); run `nudt tune \
                 --backend cuda` again",
                p.format
            ));
        }
        for c in &p.choice {
            let what = format!("dim {} type {} {}", c.dim, c.ty, c.precision);
            if !(1..=3).contains(&c.dim) || !(1..=2).contains(&c.ty) {
                return Err(format!("{what}: dimension 1–3 and type 1 or 2 expected"));
            }
            if c.precision != "f32" && c.precision != "f64" {
                return Err(format!("{what}: precision must be \"f32\" or \"f64\""));
            }
            if method_named(&c.method).is_none() {
                return Err(format!(
                    "{what}: method must be \"gm-sort\", \"sm\" or \"output-driven\", got \"{}\"",
                    c.method
                ));
            }
            if c.bins.len() != c.dim || c.bins.contains(&0) {
                return Err(format!(
                    "{what}: bins must be {} positive sides, got {:?}",
                    c.dim, c.bins
                ));
            }
        }
        Ok(p)
    }

    /// The profile as TOML, behind a comment naming the GPU.
    pub fn to_toml(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# nudt CUDA tuning profile for {} — written by `nudt tune --backend cuda`; plans \
             on this GPU read it.\n\n{body}",
            self.gpu
        ))
    }
}

/// A GPU model's profile key: name, architecture and multiprocessors (two boards of one name
/// but different SM counts tune apart), in lower case with runs of anything else as `-`.
pub fn gpu_key(arch: &GpuArch) -> String {
    let raw = format!("{}-{}-{}sm", arch.name, arch.sm(), arch.sm_count).to_lowercase();
    let mut key = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            key.push(c);
        } else if !key.ends_with('-') {
            key.push('-');
        }
    }
    key.trim_matches('-').to_string()
}

/// Where the profile of `arch` lives by default.
pub fn default_path(arch: &GpuArch) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("cuda-{}.toml", gpu_key(arch))))
}

/// The profile of `arch`'s GPU and its path, read once per process and GPU key. A missing,
/// unreadable, invalid or foreign profile counts as none: plans then plan by their own
/// rules, exactly as if `nudt tune --backend cuda` had never run.
pub fn for_gpu(arch: &GpuArch) -> Option<(&'static Path, &'static CudaProfile)> {
    type Read = Option<(&'static Path, &'static CudaProfile)>;
    static PROFILES: OnceLock<Mutex<HashMap<String, Read>>> = OnceLock::new();
    let key = gpu_key(arch);
    let mut seen = PROFILES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *seen.entry(key.clone()).or_insert_with(|| {
        let path = default_path(arch)?;
        let text = std::fs::read_to_string(&path).ok()?;
        let p = CudaProfile::parse(&text).ok().filter(|p| p.gpu == key)?;
        // Leaked once per GPU model and process, as the CPU profile's static.
        Some((Box::leak(path.into_boxed_path()), Box::leak(Box::new(p))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CudaProfile {
        CudaProfile {
            format: FORMAT,
            nudt: "0.1.0".into(),
            gpu: gpu_key(&GpuArch::h100()),
            created_unix: 1,
            quick: true,
            choice: vec![CudaChoice {
                dim: 3,
                ty: 1,
                precision: "f32".into(),
                method: "output-driven".into(),
                bins: vec![8, 4, 4],
                ms: 31.0,
                default_ms: 35.0,
            }],
            trial: vec![CudaTrial {
                dim: 3,
                ty: 1,
                precision: "f32".into(),
                method: "sm".into(),
                bins: vec![16, 16, 2],
                setpts_ms: 6.5,
                execute_ms: 40.0,
            }],
        }
    }

    #[test]
    fn round_trips_through_toml_and_is_found_by_kind() {
        let p = sample();
        let q = CudaProfile::parse(&p.to_toml().unwrap()).unwrap();
        assert_eq!(q, p);
        let c = q
            .choice(3, TransformType::Type1, Precision::F32)
            .expect("3D type 1 f32");
        assert_eq!((c.method(), c.bins()), (GpuMethod::OutputDriven, [8, 4, 4]));
        assert!(q.choice(3, TransformType::Type1, Precision::F64).is_none());
        assert!(q.choice(3, TransformType::Type2, Precision::F32).is_none());
        assert!(q.choice(3, TransformType::Type3, Precision::F32).is_none());
    }

    #[test]
    fn bad_choices_are_refused_by_name() {
        let mut p = sample();
        p.choice[0].method = "sideways".into();
        let e = CudaProfile::parse(&p.to_toml().unwrap()).unwrap_err();
        assert!(e.contains("method") && e.contains("sideways"), "{e}");
        let mut p = sample();
        p.choice[0].bins = vec![8, 0, 4];
        assert!(CudaProfile::parse(&p.to_toml().unwrap())
            .unwrap_err()
            .contains("bins"));
        let mut p = sample();
        p.choice[0].precision = "f16".into();
        assert!(CudaProfile::parse(&p.to_toml().unwrap())
            .unwrap_err()
            .contains("precision"));
        assert!(CudaProfile::parse("format = 1\n").is_err());
    }

    #[test]
    fn gpu_keys_are_file_name_safe() {
        assert_eq!(gpu_key(&GpuArch::h100()), "nvidia-h100-sm-90-132sm");
    }
}

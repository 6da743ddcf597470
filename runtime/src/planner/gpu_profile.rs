//! GPU tuning profiles, one format for CUDA and OpenCL: what `nudt tune --backend cuda|opencl`
//! measured and chose on one device model, as TOML beside the CPU profiles
//! (`cache_dir()/<backend>-<device key>.toml`). A plan on that device reads it once per
//! process and takes its bins and method for whatever its options leave to the planner
//! ([`tuned`]; `use_profile` in either backend's options); types 1 and 2 only, since type 3
//! sizes its grids from the points.

use crate::profile::cache_dir;
use nudt_gen::gpu::GpuMethod;
use nudt_gen::{Precision, TransformType};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Version of the profile layout; bumped on incompatible changes.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuProfile {
    pub format: u32,
    /// nudt version that wrote it.
    pub nudt: String,
    /// The [`device_key`] of the device it was tuned on.
    pub gpu: String,
    pub created_unix: u64,
    pub quick: bool,
    /// One choice per (dimension, type, precision) tuned.
    #[serde(default)]
    pub choice: Vec<GpuChoice>,
    /// Every configuration timed, for the record.
    #[serde(default)]
    pub trial: Vec<GpuTrial>,
}

/// One configuration of one kind of plan: what a choice and a trial both name.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuConfig {
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
    /// Points a transform per mode of the problem it was timed on (absent in profiles
    /// written before it was recorded: then any density).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points_per_mode: Option<f64>,
}

/// What was chosen for one kind of plan, and the numbers behind it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuChoice {
    #[serde(flatten)]
    pub config: GpuConfig,
    /// GPU milliseconds (set-points + execute) of the choice...
    pub ms: f64,
    /// ...and of the planner's defaults on the same problem.
    pub default_ms: f64,
}

/// One timed configuration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuTrial {
    #[serde(flatten)]
    pub config: GpuConfig,
    pub setpts_ms: f64,
    pub execute_ms: f64,
}

/// The method called `name` ([`GpuMethod::name`]).
pub fn method_named(name: &str) -> Option<GpuMethod> {
    [GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::OutputDriven]
        .into_iter()
        .find(|m| m.name() == name)
}

impl GpuChoice {
    /// The chosen method (validated by [`GpuProfile::parse`]).
    pub fn method(&self) -> GpuMethod {
        method_named(&self.config.method).unwrap_or(GpuMethod::GmSort)
    }

    /// The chosen bin sides as the plan options take them.
    pub fn bins(&self) -> [usize; 3] {
        std::array::from_fn(|d| self.config.bins.get(d).copied().unwrap_or(1))
    }
}

fn precision_name(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    }
}

impl GpuProfile {
    /// The choice for `dim`-D plans of type `ty` in `precision`.
    pub fn choice(
        &self,
        dim: usize,
        ty: TransformType,
        precision: Precision,
    ) -> Option<&GpuChoice> {
        let t = match ty {
            TransformType::Type1 => 1,
            TransformType::Type2 => 2,
            TransformType::Type3 => return None,
        };
        self.choice.iter().find(|c| {
            let c = &c.config;
            c.dim == dim && c.ty == t && c.precision == precision_name(precision)
        })
    }

    /// Reads a profile of `backend` ("cuda" or "opencl") from TOML and checks what plans
    /// would act on; the error says what is wrong, for the caller to put in front of the
    /// file's name.
    pub fn parse(text: &str, backend: &str) -> Result<GpuProfile, String> {
        let p: GpuProfile = toml::from_str(text).map_err(|e| {
            format!(
                "not a nudt {backend} tuning profile ({})",
                e.message().trim()
            )
        })?;
        if p.format != FORMAT {
            return Err(format!(
                "{backend} profile format {} is not supported (expected {FORMAT}); run `nudt \
                 tune --backend {backend}` again",
                p.format
            ));
        }
        for c in p.choice.iter().map(|c| &c.config) {
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

    /// The profile as TOML, behind a comment naming the device and `backend`.
    pub fn to_toml(&self, backend: &str) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# nudt {backend} tuning profile for {} — written by `nudt tune --backend \
             {backend}`; plans on this device read it.\n\n{body}",
            self.gpu
        ))
    }
}

/// A device model's profile key from its description `raw` (a backend's: name and what
/// tells boards of one name apart, such as their multiprocessors), in lower case with runs of
/// anything else as `-`, so that it can name a file.
pub fn device_key(raw: &str) -> String {
    let raw = raw.to_lowercase();
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

/// Where the profile of the device `key` on `backend` lives by default.
pub fn default_path(backend: &str, key: &str) -> Option<PathBuf> {
    cache_dir().map(|d| d.join(format!("{backend}-{key}.toml")))
}

/// The profile of the device `key` on `backend` and its path, read once per process and
/// device. A missing, unreadable, invalid or foreign profile counts as none: plans then plan
/// by their own rules, exactly as if `nudt tune` had never run.
pub fn for_device(backend: &str, key: &str) -> Option<(&'static Path, &'static GpuProfile)> {
    type Read = Option<(&'static Path, &'static GpuProfile)>;
    static PROFILES: OnceLock<Mutex<HashMap<String, Read>>> = OnceLock::new();
    let mut seen = PROFILES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *seen.entry(format!("{backend}-{key}")).or_insert_with(|| {
        let path = default_path(backend, key)?;
        let text = std::fs::read_to_string(&path).ok()?;
        let p = GpuProfile::parse(&text, backend)
            .ok()
            .filter(|p| p.gpu == key)?;
        // Leaked once per device model and process, as the CPU profile's static.
        Some((Box::leak(path.into_boxed_path()), Box::leak(Box::new(p))))
    })
}

/// How far (as a factor either way) a plan's points per mode may be from those of the
/// problem a choice was timed on for the choice to apply. The best bins and method move with
/// the density: 3-D type 2 f32 on 256³ modes took SM with 12×12×20 bins at one point per mode
/// (1.8× GM-sort) and 6×12×20 at a tenth of one; 2-D type 1 rows 4 deep at one point per mode
/// where 2 win at ten (H200, `nudt tune --backend cuda --points --modes`).
pub const DENSITY_SPAN: f64 = 3.0;

/// A profile's choice for one kind of plan: what [`tuned`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuned {
    /// The profile it came from.
    pub path: &'static Path,
    pub bins: [usize; 3],
    /// The method of the plan's step: spreading (type 1) or interpolation (type 2).
    pub method: GpuMethod,
    /// The points per mode it was timed at, if recorded.
    pub points_per_mode: Option<f64>,
}

impl Tuned {
    /// Whether the choice is for a plan with `points_per_mode` points a transform per mode:
    /// within [`DENSITY_SPAN`] of the tuned problem's, or any where that was not recorded.
    pub fn fits(&self, points_per_mode: f64) -> bool {
        self.points_per_mode.is_none_or(|tuned| {
            let ratio = points_per_mode / tuned;
            (1.0 / DENSITY_SPAN..=DENSITY_SPAN).contains(&ratio)
        })
    }
}

/// The tuned choice in `profile` for a plan of `kind` whose options give `bins` and the
/// spreading and interpolation `methods`: where the options leave both the bins and the
/// plan's step's method to the planner (the bins were measured with the method). Whether it
/// applies to the plan's points is [`Tuned::fits`]' to say, at set-points.
pub fn tuned(
    profile: Option<(&'static Path, &'static GpuProfile)>,
    (dim, ty, precision): (usize, TransformType, Precision),
    bins: Option<[usize; 3]>,
    methods: [Option<GpuMethod>; 2],
) -> Option<Tuned> {
    let (path, p) = profile?;
    let c = p.choice(dim, ty, precision)?;
    if bins.is_some() || methods[usize::from(ty != TransformType::Type1)].is_some() {
        return None;
    }
    Some(Tuned {
        path,
        bins: c.bins(),
        method: c.method(),
        points_per_mode: c.config.points_per_mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3D type 1 f32 configuration.
    fn config(method: &str, bins: Vec<usize>) -> GpuConfig {
        let precision = "f32".into();
        let (dim, ty, method) = (3, 1, method.into());
        GpuConfig {
            dim,
            ty,
            precision,
            method,
            bins,
            points_per_mode: Some(2.0),
        }
    }

    fn sample() -> GpuProfile {
        GpuProfile {
            format: FORMAT,
            nudt: "0.1.0".into(),
            gpu: device_key("NVIDIA H100 80GB HBM3-sm_90-132sm"),
            created_unix: 1,
            quick: true,
            choice: vec![GpuChoice {
                config: config("output-driven", vec![8, 4, 4]),
                ms: 31.0,
                default_ms: 35.0,
            }],
            trial: vec![GpuTrial {
                config: config("sm", vec![16, 16, 2]),
                setpts_ms: 6.5,
                execute_ms: 40.0,
            }],
        }
    }

    #[test]
    fn round_trips_through_toml_and_is_found_by_kind() {
        let p = sample();
        let q = GpuProfile::parse(&p.to_toml("cuda").unwrap(), "cuda").unwrap();
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
        p.choice[0].config.method = "sideways".into();
        let e = GpuProfile::parse(&p.to_toml("cuda").unwrap(), "cuda").unwrap_err();
        assert!(e.contains("method") && e.contains("sideways"), "{e}");
        let mut p = sample();
        p.choice[0].config.bins = vec![8, 0, 4];
        assert!(GpuProfile::parse(&p.to_toml("cuda").unwrap(), "cuda")
            .unwrap_err()
            .contains("bins"));
        let mut p = sample();
        p.choice[0].config.precision = "f16".into();
        assert!(GpuProfile::parse(&p.to_toml("cuda").unwrap(), "cuda")
            .unwrap_err()
            .contains("precision"));
        assert!(GpuProfile::parse("format = 1\n", "opencl").is_err());
    }

    #[test]
    fn device_keys_are_file_name_safe() {
        let key = device_key("NVIDIA H100 80GB HBM3-sm_90-132sm");
        assert_eq!(key, "nvidia-h100-80gb-hbm3-sm-90-132sm");
    }

    #[test]
    fn a_profile_fills_only_what_the_options_leave() {
        let p: &'static GpuProfile = Box::leak(Box::new(sample()));
        let read = Some((Path::new("p.toml"), p));
        let kind = (3, TransformType::Type1, Precision::F32);
        let t = tuned(read, kind, None, [None, None]).expect("3D type 1 f32");
        assert_eq!(
            (t.bins, t.method, t.path),
            ([8, 4, 4], GpuMethod::OutputDriven, Path::new("p.toml"))
        );
        assert!(tuned(read, kind, Some([2, 2, 2]), [None, None]).is_none());
        // The interpolation method named leaves a type 2 plan nothing to take; the
        // spreading method does not concern it.
        let t2 = (3, TransformType::Type2, Precision::F32);
        assert!(tuned(read, t2, None, [None, Some(GpuMethod::Sm)]).is_none());
        assert!(tuned(read, kind, None, [None, Some(GpuMethod::Sm)]).is_some());
    }

    #[test]
    fn a_choice_fits_points_within_its_density_span() {
        let p: &'static GpuProfile = Box::leak(Box::new(sample()));
        let read = Some((Path::new("p.toml"), p));
        let kind = (3, TransformType::Type1, Precision::F32);
        let t = tuned(read, kind, None, [None, None]).unwrap();
        // Timed at 2 points per mode.
        for (density, fits) in [
            (2.0, true),
            (0.7, true),
            (5.9, true),
            (0.6, false),
            (7.0, false),
        ] {
            assert_eq!(t.fits(density), fits, "{density}");
        }
        let any = Tuned {
            points_per_mode: None,
            ..t
        };
        assert!(any.fits(1e-6) && any.fits(1e6));
    }
}

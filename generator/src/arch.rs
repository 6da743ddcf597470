//! The machine the generated code is tuned for: cores, caches, SIMD width.

/// Architectural parameters of a CPU. Detected on Linux, overridable field by field.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Arch {
    /// Worker threads the parallel schedules may use.
    pub cores: usize,
    /// Per-core data cache sizes in bytes.
    pub l1: usize,
    pub l2: usize,
    /// Shared last-level cache in bytes (0 if none).
    pub l3: usize,
    /// Widest SIMD register in bytes (16 SSE/NEON, 32 AVX2, 64 AVX-512).
    pub simd_bytes: usize,
}

impl Default for Arch {
    /// A conservative modern x86 core, used where detection finds nothing.
    fn default() -> Self {
        Arch {
            cores: 1,
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 32 << 20,
            simd_bytes: 32,
        }
    }
}

impl Arch {
    /// Reads the machine this process runs on: `available_parallelism`, the sysfs cache
    /// entries of cpu0 on Linux, and the SIMD features the CPU reports.
    pub fn detect() -> Self {
        let mut a = Arch {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            simd_bytes: simd_bytes(),
            ..Arch::default()
        };
        for (level, size) in sysfs_caches() {
            match level {
                1 => a.l1 = size,
                2 => a.l2 = size,
                3 => a.l3 = size,
                _ => {}
            }
        }
        a
    }

    /// A short key naming this machine, for tuning profiles and caches.
    pub fn key(&self) -> String {
        format!(
            "c{}-l1_{}k-l2_{}k-l3_{}k-simd{}",
            self.cores,
            self.l1 >> 10,
            self.l2 >> 10,
            self.l3 >> 10,
            self.simd_bytes * 8
        )
    }
}

/// (level, bytes) of each data or unified cache of cpu0.
fn sysfs_caches() -> Vec<(u32, usize)> {
    let root = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let read = |p: std::path::PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| {
            let dir = e.path();
            let kind = read(dir.join("type"))?;
            if kind == "Instruction" {
                return None;
            }
            let level = read(dir.join("level"))?.parse().ok()?;
            let size = parse_size(&read(dir.join("size"))?)?;
            Some((level, size))
        })
        .collect()
}

/// Parses sysfs sizes such as `32K`, `1024K`, `32M`.
fn parse_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|v| v * mult)
}

fn simd_bytes() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return 64;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return 32;
        }
    }
    16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("32K"), Some(32 << 10));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn detection_gives_sane_values() {
        let a = Arch::detect();
        assert!(a.cores >= 1);
        assert!(a.l1 >= 4 << 10 && a.l2 >= a.l1);
    }
}

//! Generated GPU source as the runtime takes it: the text and a description of every
//! `extern "C"` entry point (launch geometry, local memory, parameters).

use super::GpuSpreadSpec;
/// One `extern "C"` entry point of a generated module and how to launch it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuKernel {
    pub name: &'static str,
    /// Threads per block.
    pub block_threads: u32,
    /// Dynamic shared memory per block in bytes (0: none).
    pub dynamic_smem: usize,
    /// How many blocks (x) and what blockIdx.y means.
    pub grid: &'static str,
    /// The parameters, in order, as declared in the source.
    pub params: Vec<KernelParam>,
}

/// One kernel parameter: its C type and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    pub ty: String,
    pub name: String,
}

impl KernelParam {
    /// The argument class a launcher must pass: `"ptr"`, `"u64"`, `"u32"`, `"i32"`, `"f64"`.
    pub fn class(&self) -> &'static str {
        let t = self.ty.replace("__restrict__", "");
        let t = t.trim();
        if t.contains('*') {
            "ptr"
        } else if t.contains("unsigned long long") || t == "u64" {
            "u64"
        } else if t.contains("unsigned") {
            "u32"
        } else if t.contains("double") {
            "f64"
        } else if t.contains("int") {
            "i32"
        } else {
            "other"
        }
    }
}

/// The parameter list of `extern "C"` kernel `name` in `source`. The dynamic local memory
/// of the subproblem kernels (`DYNAMIC_LOCAL_PARAM`: no parameter in CUDA, a trailing
/// `__local` one in OpenCL) is not among them: `GpuKernel::dynamic_smem` sizes it.
pub fn parse_params(source: &str, name: &str) -> Option<Vec<KernelParam>> {
    let at = source.find(&format!(" {name}("))?;
    let open = at + name.len() + 1;
    let close = open + source[open..].find(')')?;
    let list = &source[open + 1..close];
    let list = list.split("DYNAMIC_LOCAL_PARAM(").next().unwrap_or(list);
    Some(
        list.split(',')
            .map(|p| {
                let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                let cut = p.rfind([' ', '*']).map_or(0, |i| i + 1);
                KernelParam {
                    ty: p[..cut].trim().to_string(),
                    name: p[cut..].trim().to_string(),
                }
            })
            .filter(|p| !p.name.is_empty())
            .collect(),
    )
}

/// Generated CUDA source and its entry points.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSource {
    /// Unique module name (also a file stem).
    pub name: String,
    pub source: String,
    /// Stable 64-bit FNV-1a hash of `source`, for caches.
    pub hash: u64,
    pub kernels: Vec<GpuKernel>,
    /// The spread spec this module was made for (`None` for the common module).
    pub spec: Option<GpuSpreadSpec>,
}

impl GpuSource {
    pub(super) fn new(
        name: String,
        source: String,
        mut kernels: Vec<GpuKernel>,
        spec: Option<GpuSpreadSpec>,
    ) -> Self {
        for k in kernels.iter_mut() {
            k.params = parse_params(&source, k.name).unwrap_or_default();
        }
        GpuSource {
            hash: fnv1a64(source.as_bytes()),
            name,
            source,
            kernels,
            spec,
        }
    }

    /// Looks an entry point up by name.
    pub fn kernel(&self, name: &str) -> Option<&GpuKernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// A JSON description of the module's entry points and layout (for `nudt gen`).
    pub fn describe_json(&self) -> String {
        let mut s = format!(
            "{{\n  \"name\": \"{}\",\n  \"hash\": \"{:016x}\",\n",
            self.name, self.hash
        );
        if let Some(sp) = &self.spec {
            let p = sp.padded();
            s += &format!(
                "  \"dim\": {},\n  \"width\": {},\n  \"precision\": \"{}\",\n  \"kernel\": \"{:?}\",\n  \"beta\": {},\n  \"upsampling\": {},\n  \"bins\": [{}, {}, {}],\n  \"padded\": [{}, {}, {}],\n  \"smem_bytes\": {},\n  \"max_subproblem\": {},\n",
                sp.dim,
                sp.kernel.width,
                sp.precision.type_name(),
                sp.kernel.kind,
                sp.kernel.beta,
                sp.kernel.upsampling.0,
                sp.bins[0],
                sp.bins[1],
                sp.bins[2],
                p[0],
                p[1],
                p[2],
                sp.smem_bytes(),
                sp.max_subproblem
            );
        }
        s += "  \"kernels\": [\n";
        let rows: Vec<String> = self
            .kernels
            .iter()
            .map(|k| {
                format!(
                    "    {{\"name\": \"{}\", \"block_threads\": {}, \"dynamic_smem\": {}, \"grid\": \"{}\"}}",
                    k.name, k.block_threads, k.dynamic_smem, k.grid
                )
            })
            .collect();
        s += &rows.join(",\n");
        s += "\n  ]\n}\n";
        s
    }
}

/// 64-bit FNV-1a: a stable hash (unlike `DefaultHasher`) for on-disk cache keys.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

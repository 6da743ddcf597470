//! Opening an OpenCL device: platform and device discovery, context and in-order queue, and
//! the limits the generator plans for.

use super::error::{cl, OpenClError, OpenClResult};
use nudt_gen::fft::FftDevice;
use nudt_gen::gpu::Dialect;
use nudt_gen::gpu::LocalMemory;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::platform::get_platforms;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// What the planner needs to know of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClDeviceInfo {
    pub platform: String,
    pub name: String,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group: usize,
    /// `CL_DEVICE_LOCAL_MEM_SIZE` in bytes.
    pub local_mem: usize,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS` (a GPU's multiprocessors, a CPU's cores).
    pub compute_units: usize,
    /// `CL_DEVICE_GLOBAL_MEM_CACHE_SIZE` in bytes (a GPU's L2): past it the bin sort takes
    /// two passes ([`nudt_gen::gpu::sort_passes`]).
    pub cache_bytes: usize,
    /// Whether `cl_khr_fp64` is present.
    pub fp64: bool,
    /// Whether the compiler takes inline PTX with floating-point reductions: NVIDIA's
    /// platform on a GPU of compute capability 6.0 or later (`cl_nv_device_attribute_query`).
    pub ptx: bool,
    /// `CL_DRIVER_VERSION`, part of the program cache's key.
    pub driver: String,
}

impl ClDeviceInfo {
    /// The dialect the NUFFT's modules are generated in for this device.
    pub fn dialect(&self) -> Dialect {
        Dialect::OpenCl {
            fp64: self.fp64,
            ptx: self.ptx,
        }
    }

    /// The key of this device model in tuning profiles ([`crate::planner::gpu_profile`]):
    /// platform, name and compute units.
    pub fn profile_key(&self) -> String {
        let raw = format!("{}-{}-{}cu", self.platform, self.name, self.compute_units);
        crate::planner::gpu_profile::device_key(&raw)
    }

    /// The limits the FFT generator plans for.
    pub fn fft_device(&self) -> FftDevice {
        FftDevice::opencl(self.max_work_group, self.local_mem, self.fp64)
    }

    /// The local memory the spreading bins plan for: all of a work-group's, as both the
    /// budget and the limit (OpenCL has no opt-in beyond it).
    pub fn local_memory(&self) -> LocalMemory {
        LocalMemory {
            budget: self.local_mem,
            per_block: self.local_mem,
        }
    }
}

/// A device with its context and command queue, shared by the plans made on it.
pub struct ClDevice {
    /// Distinct for every opening in the process: the key of its built programs in memory
    /// (an address could be another opening's once this one is dropped, and its programs
    /// belong to its own context).
    pub(crate) id: u64,
    pub(crate) context: Context,
    pub(crate) queue: CommandQueue,
    pub info: ClDeviceInfo,
    /// Opened again on a device already open ([`Self::reopen`]): its kernels run one at a
    /// time with the other reopenings', each to its end ([`super::launch`]).
    pub(crate) twin: bool,
}

impl std::fmt::Debug for ClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClDevice")
            .field("info", &self.info)
            .finish()
    }
}

impl ClDevice {
    /// The first GPU of any platform, else the first device of any type (a CPU through PoCL).
    ///
    /// Discovered and opened once per process and shared by every caller, like CUDA's primary
    /// context: platform and device discovery is not safe against concurrent calls in every
    /// driver (PoCL 3.1 re-initialises its devices in `clGetDeviceIDs`, after the last
    /// context has gone, while another thread reads their names), and one context per process
    /// lets plans share buffers and build programs once. The answer, a device or why there is
    /// none, is kept for the process.
    pub fn first() -> OpenClResult<Arc<ClDevice>> {
        static FIRST: OnceLock<OpenClResult<Arc<ClDevice>>> = OnceLock::new();
        FIRST.get_or_init(Self::discover).clone()
    }

    /// This device opened again, with a context and queue of its own: a device apart from
    /// this one to a plan, as another GPU is. Several stand for several devices where a
    /// machine has one (CI runs a [`crate::MultiPlan`] on PoCL this way).
    pub fn reopen(&self) -> OpenClResult<Arc<ClDevice>> {
        let id = *self
            .context
            .devices()
            .first()
            .ok_or(OpenClError::NoDevice(self.info.platform.clone()))?;
        let mut twin = Self::open(Device::new(id), self.info.platform.clone())?;
        twin.twin = true;
        Ok(Arc::new(twin))
    }

    /// The device's context: device buffers given to a plan (`execute_device`,
    /// `set_points_device`) are made in it, with the `opencl3` this crate re-exports.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The in-order queue of every plan on the device: a caller's work queued on it runs in
    /// order with theirs.
    pub fn queue(&self) -> &CommandQueue {
        &self.queue
    }

    /// A generator error for a module of this device: a missing `cl_khr_fp64` names it.
    pub(crate) fn refusal(&self, e: nudt_gen::GenError) -> OpenClError {
        match e {
            nudt_gen::GenError::Fp64Unsupported => OpenClError::Unsupported {
                device: self.info.name.clone(),
                source: e,
            },
            e => e.into(),
        }
    }

    fn discover() -> OpenClResult<Arc<ClDevice>> {
        let platforms = get_platforms().map_err(cl("clGetPlatformIDs"))?;
        if platforms.is_empty() {
            return Err(OpenClError::NoPlatform);
        }
        for kind in [CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL] {
            for p in &platforms {
                // A platform without devices of this type answers with an error: skip it.
                if let Some(&id) = p
                    .get_devices(kind)
                    .ok()
                    .and_then(|d| d.first().copied())
                    .as_ref()
                {
                    return Self::open(Device::new(id), p.name().unwrap_or_default()).map(Arc::new);
                }
            }
        }
        let names: Vec<String> = platforms
            .iter()
            .map(|p| p.name().unwrap_or_default())
            .collect();
        Err(OpenClError::NoDevice(names.join(", ")))
    }

    fn open(device: Device, platform: String) -> OpenClResult<ClDevice> {
        let extensions = device.extensions().map_err(cl("clGetDeviceInfo"))?;
        let has = |name: &str| extensions.split_whitespace().any(|e| e == name);
        let ptx = platform.contains("NVIDIA")
            && has("cl_nv_device_attribute_query")
            && device
                .compute_capability_major_nv()
                .is_ok_and(|major| major >= 6);
        let info = ClDeviceInfo {
            platform,
            name: device.name().map_err(cl("clGetDeviceInfo"))?,
            max_work_group: device
                .max_work_group_size()
                .map_err(cl("clGetDeviceInfo"))?,
            local_mem: device.local_mem_size().map_err(cl("clGetDeviceInfo"))? as usize,
            compute_units: device.max_compute_units().map_err(cl("clGetDeviceInfo"))? as usize,
            cache_bytes: device
                .global_mem_cache_size()
                .map_err(cl("clGetDeviceInfo"))? as usize,
            fp64: has("cl_khr_fp64"),
            ptx,
            driver: device.driver_version().map_err(cl("clGetDeviceInfo"))?,
        };
        let context = Context::from_device(&device).map_err(cl("clCreateContext"))?;
        let queue =
            CommandQueue::create_default(&context, 0).map_err(cl("clCreateCommandQueue"))?;
        static OPENED: AtomicU64 = AtomicU64::new(0);
        Ok(ClDevice {
            id: OPENED.fetch_add(1, Ordering::Relaxed),
            context,
            queue,
            info,
            twin: false,
        })
    }
}

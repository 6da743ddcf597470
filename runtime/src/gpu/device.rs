//! The small device API the shared GPU code runs on: kernel arguments ([`Arg`]) and the few
//! operations ([`Device`]) that CUDA (a stream) and OpenCL (a device's queue) each implement
//! once — allocate, upload, read back, launch an element-wise kernel.

use crate::error::NudtError;
use nudt_gen::gpu::ArgKind;

/// One kernel argument, typed as the kernels' declarations type their parameters
/// ([`nudt_gen::gpu::signature`]): every launch is checked against the declaration before it
/// is made. `M` is the backend's handle of a device array (CUDA: its address; OpenCL: its
/// memory object), which also stands for "no array" (an unused dimension's).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg<M> {
    Mem(M),
    /// The bytes of a `__local` array, last (OpenCL's subproblem kernels; no parameter of the
    /// declaration, and refused on CUDA, whose kernels size their shared memory themselves).
    #[cfg_attr(not(feature = "opencl"), allow(dead_code))]
    Local(usize),
    U32(u32),
    I32(i32),
    U64(u64),
    F64(f64),
}

impl<M> Arg<M> {
    /// The kind of parameter it fills (none for local memory).
    pub fn kind(&self) -> Option<ArgKind> {
        Some(match self {
            Arg::Mem(_) => ArgKind::Buffer,
            Arg::Local(_) => return None,
            Arg::U32(_) => ArgKind::U32,
            Arg::I32(_) => ArgKind::I32,
            Arg::U64(_) => ArgKind::U64,
            Arg::F64(_) => ArgKind::F64,
        })
    }
}

/// Three scalars, one per dimension, as kernels take them (`cx`, `cy`, `cz`).
pub(crate) fn f64s<M>(a: [f64; 3]) -> [Arg<M>; 3] {
    a.map(Arg::F64)
}

/// What the shared GPU code needs of a backend for arrays of `T`.
pub(crate) trait Device<T> {
    type Error: From<NudtError>;
    /// An owned device array of `T`.
    type Buf;
    /// What a kernel argument takes for an array, or for none.
    type Mem: Copy;
    /// A loaded kernel.
    type Kernel;
    /// The handle of `b`, or of no array.
    fn mem(&self, b: Option<&Self::Buf>) -> Self::Mem;
    /// How many `T` the array holds.
    fn holds(&self, b: &Self::Buf) -> usize;
    /// A new array of `len` values (at least one); `what` names it in errors.
    fn alloc(&self, len: usize, what: &str) -> Result<Self::Buf, Self::Error>;
    fn upload(&self, v: &[T], what: &str) -> Result<Self::Buf, Self::Error>;
    /// The first `n` values of the array at `x`, once the work queued before has run: the
    /// slow paths that name a bad value.
    fn read(&self, x: Self::Mem, n: usize) -> Result<Vec<T>, Self::Error>;
    /// The first `n` 32-bit words of the array at `x`, once the work queued before has run:
    /// counters a kernel keeps in an array of `T` (a multi-device plan's routing).
    fn read_words(&self, x: Self::Mem, n: usize) -> Result<Vec<u32>, Self::Error>;
    /// Zeroes the first `n` values of the array at `x`, in the order of the queue.
    fn zero(&self, x: Self::Mem, n: usize) -> Result<(), Self::Error>;
    /// Launches the element-wise kernel `k` over `items` work items for each of `nb`
    /// transforms.
    fn launch(
        &self,
        k: &Self::Kernel,
        items: usize,
        nb: usize,
        args: &[Arg<Self::Mem>],
    ) -> Result<(), Self::Error>;

    /// Whether the array `b` lives on this device (a caller's array given to a multi-device
    /// plan: one on another device would fault, or be another context's handle).
    fn owns(&self, b: &Self::Buf) -> bool;

    /// Waits until the work queued so far has run (a multi-device plan's step times).
    fn sync(&self) -> Result<(), Self::Error>;

    /// Bytes of device memory a plan may take (CUDA: free now; OpenCL: the device's global
    /// memory): what a multi-device plan's spread rule weighs a batch of grids against.
    fn memory(&self) -> usize;

    /// `b`, grown to hold `len` values where it holds fewer (its contents then lost; the old
    /// array freed first, so that the two never coexist).
    fn grow(&self, b: &mut Self::Buf, len: usize, what: &str) -> Result<(), Self::Error> {
        if self.holds(b) < len.max(1) {
            *b = self.alloc(1, what)?;
            *b = self.alloc(len, what)?;
        }
        Ok(())
    }

    /// The handles of up to three arrays (a point set's coordinates), none for the rest.
    fn mem3(&self, v: &[impl std::borrow::Borrow<Self::Buf>]) -> [Self::Mem; 3] {
        std::array::from_fn(|d| self.mem(v.get(d).map(|b| b.borrow())))
    }
}

//! nudt-kernels: nudt's generated CPU spreaders — every dimension (1–3), width (2–16) and
//! precision, instantiated through the same `spreader!` macro users call, plus the
//! wide-Gaussian ones — and a registry that picks one.
//!
//! They are a crate apart from nudt-runtime, which runs them, because they are most of its
//! machine code: compiled here once, they are not compiled again for the runtime's unit tests
//! or after each edit of the runtime.

/// Width-independent generated code (tiling, bin sort, schedules) shared by every spreader.
pub mod support {
    nudt_macros::support! {}
}

use crate::support::{
    interp, interp_grad, interp_row, spread_grad, spread_source_driven, spread_source_driven_row,
    spread_target_driven, GradTables, GradTileKernel, Real, TileKernel, Tiles,
};

/// `(tiles, strengths, grid, table)`: spread onto the grid.
pub type SpreadFn<T> = fn(&Tiles<T>, &[T], &mut [T], &[T]);
/// `(tiles, strengths, grid, table, max points per block)`: target-driven spread.
pub type SpreadBlocksFn<T> = fn(&Tiles<T>, &[T], &mut [T], &[T], usize);
/// `(tiles, grid, values, table, points per task)`: interpolate from the grid.
pub type InterpFn<T> = fn(&Tiles<T>, &[T], &mut [T], &[T], usize);
/// Consecutive rows of tiles along the first dimension: a slab's.
pub type TileRows = std::ops::Range<usize>;
/// `(tiles, strengths, slab, table, rows)`: spread rows of tiles into their slab.
pub type SpreadRowFn<T> = fn(&Tiles<T>, &[T], &mut [T], &[T], TileRows);
/// `(tiles, slab, values, table, points per task, rows)`: interpolate those rows' points.
pub type InterpRowFn<T> = fn(&Tiles<T>, &[T], &mut [T], &[T], usize, TileRows);

/// `(tiles, values and derivative weights, grid, tables, rows)`: spread with the kernel's
/// derivative ([`GradTileKernel`]), onto the whole grid or rows' slab.
pub type SpreadGradFn<T> = fn(&Tiles<T>, &[T], &mut [T], &GradTables<'_, T>, Option<TileRows>);
/// `(tiles, grid, values and derivatives, tables, points per task, rows)`.
pub type InterpGradFn<T> =
    fn(&Tiles<T>, &[T], &mut [T], &GradTables<'_, T>, usize, Option<TileRows>);

/// The kernels with the derivative of a spreader: for gradients with respect to the points.
#[derive(Clone, Copy)]
pub struct GradFns<T: 'static> {
    pub spread: SpreadGradFn<T>,
    pub interp: InterpGradFn<T>,
}

/// Type-erased entry points of one generated spreader.
#[derive(Clone, Copy)]
pub struct KernelFns<T: 'static> {
    pub spread_source_driven: SpreadFn<T>,
    pub spread_target_driven: SpreadBlocksFn<T>,
    pub interp: InterpFn<T>,
    pub spread_row: SpreadRowFn<T>,
    pub interp_row: InterpRowFn<T>,
    /// The Horner table baked into the module (PSWF kernel, σ = 2, at this width); empty for
    /// the wide Gaussian, whose table is built at run time ([`wide_table`]).
    pub table: &'static [T],
    /// Reals per row of the module's Horner table ([`TileKernel::TABLE_COLUMNS`]): tables
    /// fitted at run time are padded with zero columns to match.
    pub table_columns: usize,
    /// The value-and-gradient kernels; `None` for the wide Gaussian (type 3 only, whose
    /// gradients are transforms of their own).
    pub grad: Option<GradFns<T>>,
}

/// A Horner-table spreader's entry points, its gradient kernels included.
fn entry_grad<T: Real, K: GradTileKernel<T>>(table: &'static [T]) -> KernelFns<T> {
    KernelFns {
        grad: Some(GradFns {
            spread: spread_grad::<T, K>,
            interp: interp_grad::<T, K>,
        }),
        ..entry::<T, K>(table)
    }
}

fn entry<T: Real, K: TileKernel<T>>(table: &'static [T]) -> KernelFns<T> {
    KernelFns {
        spread_source_driven: spread_source_driven::<T, K>,
        spread_target_driven: spread_target_driven::<T, K>,
        interp: interp::<T, K>,
        spread_row: spread_source_driven_row::<T, K>,
        interp_row: interp_row::<T, K>,
        table,
        table_columns: K::TABLE_COLUMNS,
        grad: None,
    }
}

/// Registry of the kernels of one precision.
pub trait KernelRegistry: Real {
    /// The generated spreader for `dim` and `width`; `None` outside 1–3 × 2–16.
    fn kernels(dim: usize, width: usize) -> Option<KernelFns<Self>>;
    /// The wide-Gaussian spreader for `dim` (any odd width, given by its table).
    fn wide_kernels(dim: usize) -> Option<KernelFns<Self>>;
}

/// The wide-Gaussian table for half-width `m` and shape `b` (the same in every dimension).
pub fn wide_table<T: Real>(m: usize, b: f64) -> Vec<T> {
    double_wide::d1::table(m, b)
        .into_iter()
        .map(T::of)
        .collect()
}

macro_rules! registry {
    ($real:ident, $module:ident, $wide:ident; $($name:ident = ($d:tt, $w:tt)),* $(,)?) => {
        #[allow(clippy::needless_range_loop)]
        mod $module {
            $(
                pub mod $name {
                    nudt_macros::spreader! { dim = $d, width = $w, precision = $real, kernel = pswf, support = crate::support }
                }
            )*
        }

        /// Wide-Gaussian spreaders (Capozzoli et al.'s type 3), one per dimension.
        #[allow(clippy::needless_range_loop)]
        mod $wide {
            pub mod d1 {
                nudt_macros::spreader! { dim = 1, precision = $real, kernel = gaussian_wide, support = crate::support }
            }
            pub mod d2 {
                nudt_macros::spreader! { dim = 2, precision = $real, kernel = gaussian_wide, support = crate::support }
            }
            pub mod d3 {
                nudt_macros::spreader! { dim = 3, precision = $real, kernel = gaussian_wide, support = crate::support }
            }
        }

        impl KernelRegistry for $real {
            fn kernels(dim: usize, width: usize) -> Option<KernelFns<Self>> {
                match (dim, width) {
                    $( ($d, $w) => Some(entry_grad::<$real, $module::$name::Kernel>($module::$name::table())), )*
                    _ => None,
                }
            }

            fn wide_kernels(dim: usize) -> Option<KernelFns<Self>> {
                match dim {
                    1 => Some(entry::<$real, $wide::d1::Kernel>(&[])),
                    2 => Some(entry::<$real, $wide::d2::Kernel>(&[])),
                    3 => Some(entry::<$real, $wide::d3::Kernel>(&[])),
                    _ => None,
                }
            }
        }
    };
}

macro_rules! all_widths {
    ($real:ident, $module:ident, $wide:ident) => {
        registry!($real, $module, $wide;
            d1_w2 = (1, 2), d1_w3 = (1, 3), d1_w4 = (1, 4), d1_w5 = (1, 5), d1_w6 = (1, 6), d1_w7 = (1, 7), d1_w8 = (1, 8), d1_w9 = (1, 9), d1_w10 = (1, 10), d1_w11 = (1, 11), d1_w12 = (1, 12), d1_w13 = (1, 13), d1_w14 = (1, 14), d1_w15 = (1, 15), d1_w16 = (1, 16),
            d2_w2 = (2, 2), d2_w3 = (2, 3), d2_w4 = (2, 4), d2_w5 = (2, 5), d2_w6 = (2, 6), d2_w7 = (2, 7), d2_w8 = (2, 8), d2_w9 = (2, 9), d2_w10 = (2, 10), d2_w11 = (2, 11), d2_w12 = (2, 12), d2_w13 = (2, 13), d2_w14 = (2, 14), d2_w15 = (2, 15), d2_w16 = (2, 16),
            d3_w2 = (3, 2), d3_w3 = (3, 3), d3_w4 = (3, 4), d3_w5 = (3, 5), d3_w6 = (3, 6), d3_w7 = (3, 7), d3_w8 = (3, 8), d3_w9 = (3, 9), d3_w10 = (3, 10), d3_w11 = (3, 11), d3_w12 = (3, 12), d3_w13 = (3, 13), d3_w14 = (3, 14), d3_w15 = (3, 15), d3_w16 = (3, 16)
        );
    };
}

all_widths!(f32, single, single_wide);
all_widths!(f64, double, double_wide);

//! nudt-macros: instantiate nudt's generated spreaders at compile time.
//!
//! ```ignore
//! mod es7 {
//!     nudt::spreader! { dim = 3, width = 7, precision = f64, kernel = es, strategy = target_driven }
//! }
//! let tiles = es7::bin(&[64, 64, 64], &[16, 16, 16], &[&x, &y, &z]);
//! es7::spread(&tiles, &strengths, &mut grid);
//! ```
//!
//! Both macros call `nudt-gen` — the same generator behind `nudt gen` and the runtime — and
//! parse its output as Rust tokens.

mod args;

use proc_macro::TokenStream;

/// Expands to a specialised spreader: `DIM`, `WIDTH`, `COEFFS`, `Kernel` (the tile kernels),
/// `bin`, `spread` and `interp`.
///
/// Arguments (all `key = value`, comma separated):
/// `dim` (1–3, required); `width` (2–16) or `tol` (a float); `precision` (`f32` | `f64`,
/// default `f64`); `kernel` (`pswf` | `es` | `gaussian` | `gaussian_wide`, default `pswf`; `gaussian_wide`
/// takes no width: it spreads windows of any width given at run time); `upsampfac` (`2.0` | `1.25`,
/// default `2.0`); `strategy` (`source_driven` | `target_driven` | `auto`, default `auto`,
/// which is source-driven); `support` (path of the support module, default `::nudt::support`).
#[proc_macro]
pub fn spreader(input: TokenStream) -> TokenStream {
    let parsed = syn::parse_macro_input!(input as args::SpreaderArgs);
    match parsed.render() {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Expands to the width-independent support items (scalar trait, tiling, bin sort, schedules)
/// that every spreader plugs into. Invoke once, inside a module.
#[proc_macro]
pub fn support(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "support! takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    match nudt_gen::render::SUPPORT_MODULE.parse::<proc_macro2::TokenStream>() {
        Ok(ts) => ts.into(),
        Err(e) => err(&format!("the support module does not parse: {e}")),
    }
}

fn err(msg: &str) -> TokenStream {
    syn::Error::new(proc_macro2::Span::call_site(), msg)
        .to_compile_error()
        .into()
}

//! Parsing and checking of `spreader!` arguments; every error names the argument at fault.

use nudt_gen::render::RustSpreader;
use nudt_gen::{KernelKind, KernelSpec, Precision, Strategy, Upsampling};
use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, ExprLit, Ident, Lit, Token};

pub struct SpreaderArgs {
    pairs: Vec<(Ident, Expr)>,
}

impl Parse for SpreaderArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut pairs = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            pairs.push((key, value));
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(SpreaderArgs { pairs })
    }
}

fn bad(value: &Expr, msg: String) -> syn::Error {
    syn::Error::new_spanned(value, msg)
}

fn int(key: &str, v: &Expr) -> syn::Result<usize> {
    match v {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        _ => Err(bad(v, format!("`{key}` expects an integer"))),
    }
}

fn float(key: &str, v: &Expr) -> syn::Result<f64> {
    match v {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        _ => Err(bad(v, format!("`{key}` expects a number"))),
    }
}

fn word(key: &str, v: &Expr, allowed: &[&str]) -> syn::Result<String> {
    let s = match v {
        Expr::Path(p) if p.path.get_ident().is_some() => p.path.get_ident().unwrap().to_string(),
        _ => String::new(),
    };
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(bad(
            v,
            format!("`{key}` must be one of: {}", allowed.join(", ")),
        ))
    }
}

impl SpreaderArgs {
    pub fn render(&self) -> syn::Result<TokenStream> {
        let mut dim = None;
        let mut width = None;
        let mut tol = None;
        let mut precision = Precision::F64;
        let mut kind = KernelKind::Pswf;
        let mut sigma = Upsampling::TWO;
        let mut strategy = Strategy::Auto;
        let mut support = "::nudt::support".to_string();
        let mut wide = false;
        for (k, v) in &self.pairs {
            match k.to_string().as_str() {
                "dim" => {
                    let d = int("dim", v)?;
                    if !(1..=3).contains(&d) {
                        return Err(bad(v, format!("`dim` must be 1, 2 or 3, got {d}")));
                    }
                    dim = Some(d);
                }
                "width" => width = Some((int("width", v)?, v)),
                "tol" => tol = Some((float("tol", v)?, v)),
                "precision" => {
                    precision = match word("precision", v, &["f32", "f64"])?.as_str() {
                        "f32" => Precision::F32,
                        _ => Precision::F64,
                    }
                }
                "kernel" => {
                    kind = match word("kernel", v, &["pswf", "es", "gaussian", "gaussian_wide"])?.as_str() {
                        "pswf" => KernelKind::Pswf,
                        "es" => KernelKind::Es,
                        "gaussian" => KernelKind::Gaussian,
                        _ => {
                            wide = true;
                            KernelKind::Gaussian
                        }
                    }
                }
                "upsampfac" => {
                    sigma = Upsampling::new(float("upsampfac", v)?)
                        .map_err(|e| bad(v, format!("`upsampfac`: {e}")))?
                }
                "strategy" => {
                    strategy = match word("strategy", v, &["source_driven", "target_driven", "auto"])?.as_str() {
                        "source_driven" => Strategy::SourceDriven,
                        "target_driven" => Strategy::TargetDriven,
                        _ => Strategy::Auto,
                    }
                }
                "support" => match v {
                    Expr::Path(p) => support = quote::quote!(#p).to_string().replace(' ', ""),
                    _ => return Err(bad(v, "`support` expects a module path".into())),
                },
                other => {
                    return Err(syn::Error::new_spanned(
                        k,
                        format!("unknown argument `{other}`; expected dim, width, tol, precision, kernel, upsampfac, strategy or support"),
                    ))
                }
            }
        }
        let dim =
            dim.ok_or_else(|| syn::Error::new(Span::call_site(), "missing argument `dim`"))?;
        if wide {
            // Width and shape come at run time, with the table.
            let src = nudt_gen::render::gaussian_wide_module(dim, precision, &support)
                .map_err(|e| syn::Error::new(Span::call_site(), e.to_string()))?;
            return parse(&src);
        }
        let kernel = match (width, tol) {
            (Some(_), Some((_, v))) => {
                return Err(bad(v, "give either `width` or `tol`, not both".into()))
            }
            (Some((w, v)), None) => KernelSpec::for_width(kind, w, sigma)
                .map_err(|e| bad(v, format!("`width`: {e}")))?,
            (None, Some((t, v))) => KernelSpec::for_tolerance(kind, t, sigma, precision)
                .map_err(|e| bad(v, format!("`tol`: {e}")))?,
            (None, None) => {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "missing argument `width` (or `tol`)",
                ))
            }
        };
        let provenance = vec![
            format!("dim = {dim}, precision = {}", precision.type_name()),
            format!(
                "kernel = {:?}, width = {}, beta = {}, upsampfac = {}",
                kind, kernel.width, kernel.beta, sigma.0
            ),
            format!("strategy = {strategy:?}"),
        ];
        let spec = RustSpreader {
            dim,
            kernel,
            precision,
            strategy,
            support_path: support,
            max_block_points: 1 << 15,
            simd_bytes: nudt_gen::Arch::default().simd_bytes,
            provenance,
        };
        let src = nudt_gen::render::spreader_module(&spec)
            .map_err(|e| syn::Error::new(Span::call_site(), e.to_string()))?;
        parse(&src)
    }
}

fn parse(src: &str) -> syn::Result<TokenStream> {
    src.parse::<TokenStream>().map_err(|e| {
        syn::Error::new(
            Span::call_site(),
            format!("generated spreader does not parse: {e}"),
        )
    })
}

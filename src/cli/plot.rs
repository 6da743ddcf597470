//! `bench --plot FILE.svg|png`: throughput per problem, one bar per implementation.

use super::{fail, write_atomic, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// One implementation's bars: its name and throughput per problem (None: not measured).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

const SIZE: (u32, u32) = (1000, 560);
const COLORS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];

/// TrueType fonts tried for the labels; `NUDT_FONT` comes first.
const FONT_PATHS: [&str; 8] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a system font as "sans-serif" (once).
fn load_font() -> Result<()> {
    static LOADED: std::sync::OnceLock<std::result::Result<(), String>> =
        std::sync::OnceLock::new();
    LOADED
        .get_or_init(|| {
            let env = std::env::var("NUDT_FONT").ok();
            for path in env.iter().map(String::as_str).chain(FONT_PATHS) {
                if let Ok(bytes) = std::fs::read(path) {
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                        .is_ok()
                    {
                        return Ok(());
                    }
                }
            }
            Err("--plot: no TrueType font found for the chart's labels; set NUDT_FONT=/path/to/font.ttf".into())
        })
        .clone()
        .map_err(super::Error)
}

/// Draws the chart into `path`; the extension (.svg or .png) picks the format.
pub fn throughput(path: &Path, title: &str, problems: &[String], series: &[Series]) -> Result<()> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if ext != "svg" && ext != "png" {
        return Err(fail!(
            "--plot {}: expected a file name ending in .svg or .png",
            path.display()
        ));
    }
    load_font()?;
    let what = "--plot";
    if ext == "svg" {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
            draw(root, title, problems, series)
                .map_err(|e| fail!("{what} {}: {e}", path.display()))?;
        }
        write_atomic(path, what, |w| std::io::Write::write_all(w, svg.as_bytes()))
    } else {
        let mut rgb = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
            draw(root, title, problems, series)
                .map_err(|e| fail!("{what} {}: {e}", path.display()))?;
        }
        write_atomic(path, what, |w| {
            let mut enc = png::Encoder::new(w, SIZE.0, SIZE.1);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut writer = enc.write_header().map_err(std::io::Error::other)?;
            writer
                .write_image_data(&rgb)
                .map_err(std::io::Error::other)?;
            writer.finish().map_err(std::io::Error::other)
        })
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    problems: &[String],
    series: &[Series],
) -> std::result::Result<(), String>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(err)?;
    let n = problems.len().max(1);
    let ymax = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1e-3)
        * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..ymax)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("million nonuniform points / s (plan + setpts + execute)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    let k = series.len().max(1) as f64;
    let bar = 0.8 / k;
    for (si, s) in series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let bars = s.values.iter().enumerate().filter_map(|(i, v)| {
            let v = (*v)?;
            let x0 = i as f64 - 0.4 + si as f64 * bar;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + bar * 0.95, v)],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    let style =
        TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, name) in problems.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64, 0.0));
        root.draw(&Text::new(name.clone(), (px, py + 8), style.clone()))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

//! Charts as inline SVG, drawn with plotters (its SVG backend needs no fonts: text stays text).

// Chart geometry: counts of registries, bins and communities are far below u32::MAX, and bin
// indices come from values clamped to [0, 1].
#![allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::Error;

const BLUE: RGBColor = RGBColor(78, 121, 167);
const RED: RGBColor = RGBColor(225, 87, 89);
const GREY: RGBColor = RGBColor(120, 120, 120);

fn chart_err<E: std::fmt::Display>(chart: &'static str) -> impl Fn(E) -> Error {
    move |e| Error::Chart {
        chart,
        message: e.to_string(),
    }
}

/// Bins of `[0, 1]`.
const BINS: u32 = 20;

/// Slop-score histograms, one row per registry (each scaled to its own tallest bin), the
/// quarantine threshold marked; the x axis under the last row.
pub(crate) fn slop_by_registry(
    scores: &BTreeMap<String, Vec<f64>>,
    threshold: f64,
) -> Result<String, Error> {
    let e = chart_err("slop distribution");
    let rows = scores.len().max(1) as u32;
    let row_h = 56u32;
    let axis_h = 40u32;
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (760, row_h * rows + axis_h)).into_drawing_area();
        root.fill(&WHITE).map_err(&e)?;
        let breaks: Vec<u32> = (1..rows).map(|i| i * row_h).collect();
        let areas = root.split_by_breakpoints::<u32, u32, _, _>([], breaks);
        for (k, (area, (registry, values))) in areas.iter().zip(scores).enumerate() {
            let last = k + 1 == scores.len();
            let mut counts = vec![0u32; BINS as usize];
            for v in values {
                let b = ((v.clamp(0.0, 1.0) * f64::from(BINS)) as u32).min(BINS - 1);
                counts[b as usize] += 1;
            }
            let top = counts.iter().copied().max().unwrap_or(1).max(1);
            area.draw(&Text::new(
                registry.clone(),
                (8, 14),
                ("sans-serif", 13).into_font().color(&BLACK),
            ))
            .map_err(&e)?;
            area.draw(&Text::new(
                format!("{} skills", values.len()),
                (8, 32),
                ("sans-serif", 11).into_font().color(&GREY),
            ))
            .map_err(&e)?;
            let mut c = ChartBuilder::on(area)
                .margin_left(200)
                .margin_right(16)
                .margin_top(4)
                .margin_bottom(2)
                .y_label_area_size(40)
                .x_label_area_size(if last { axis_h } else { 0 })
                .build_cartesian_2d(0f64..1f64, 0u32..top)
                .map_err(&e)?;
            let mut mesh = c.configure_mesh();
            mesh.disable_mesh()
                .y_labels(2)
                .label_style(("sans-serif", 11));
            if last {
                mesh.x_labels(11)
                    .x_desc(format!(
                        "slop_score (1 = clean) — red: below the quarantine threshold {threshold}"
                    ))
                    .axis_desc_style(("sans-serif", 12));
            } else {
                mesh.disable_x_axis();
            }
            mesh.draw().map_err(&e)?;
            c.draw_series(counts.iter().enumerate().map(|(i, &n)| {
                let x0 = i as f64 / f64::from(BINS);
                let x1 = (i + 1) as f64 / f64::from(BINS);
                let colour = if x1 <= threshold + 1e-9 { RED } else { BLUE };
                Rectangle::new([(x0, 0), (x1, n)], colour.mix(0.85).filled())
            }))
            .map_err(&e)?;
            c.draw_series(std::iter::once(PathElement::new(
                vec![(threshold, 0), (threshold, top)],
                GREY.stroke_width(1),
            )))
            .map_err(&e)?;
        }
        root.present().map_err(&e)?;
    }
    Ok(strip_header(svg))
}

/// Degree distribution of the union graph on log–log axes: how many skills have degree d.
pub(crate) fn degree_distribution(degrees: &[usize]) -> Result<String, Error> {
    let e = chart_err("degree distribution");
    let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
    for &d in degrees.iter().filter(|&&d| d > 0) {
        *counts.entry(d).or_default() += 1;
    }
    let max_d = counts.keys().copied().max().unwrap_or(1).max(2) as f64;
    let max_n = f64::from(counts.values().copied().max().unwrap_or(1).max(2));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (480, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(&e)?;
        let mut c = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(
                (1f64..max_d * 1.5).log_scale(),
                (1f64..max_n * 1.5).log_scale(),
            )
            .map_err(&e)?;
        c.configure_mesh()
            .light_line_style(WHITE)
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc("degree (distinct neighbours), log scale")
            .y_desc("skills, log scale")
            .axis_desc_style(("sans-serif", 12))
            .draw()
            .map_err(&e)?;
        c.draw_series(
            counts
                .iter()
                .map(|(&d, &n)| Circle::new((d as f64, f64::from(n)), 3, BLUE.filled())),
        )
        .map_err(&e)?;
        root.present().map_err(&e)?;
    }
    Ok(strip_header(svg))
}

/// Sizes of the largest communities, largest first.
pub(crate) fn community_sizes(sizes: &[u32]) -> Result<String, Error> {
    let e = chart_err("community sizes");
    let shown = &sizes[..sizes.len().min(40)];
    let top = shown.iter().copied().max().unwrap_or(1).max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (480, 320)).into_drawing_area();
        root.fill(&WHITE).map_err(&e)?;
        let mut c = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0u32..(shown.len().max(1) as u32), 0u32..top + top / 10 + 1)
            .map_err(&e)?;
        c.configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .x_desc(format!("the {} largest communities", shown.len()))
            .y_desc("skills")
            .axis_desc_style(("sans-serif", 12))
            .draw()
            .map_err(&e)?;
        c.draw_series(shown.iter().enumerate().map(|(i, &n)| {
            let i = i as u32;
            Rectangle::new([(i, 0), (i + 1, n)], BLUE.mix(0.85).filled())
        }))
        .map_err(&e)?;
        root.present().map_err(&e)?;
    }
    Ok(strip_header(svg))
}

/// plotters' SVG carries fixed width/height; drop them so CSS can scale the chart.
fn strip_header(svg: String) -> String {
    match svg.find("viewBox=") {
        Some(i) if svg.starts_with("<svg ") => format!("<svg class=\"chart\" {}", &svg[i..]),
        _ => svg,
    }
}

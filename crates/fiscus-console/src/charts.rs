//! Pictures where people would rather look than read, drawn on the server as SVG by `plotters` (no script,
//! nothing fetched): each chart is a `figure` with a text alternative naming what it shows and its latest
//! value, and the figures behind it in a table under a disclosure, so no reader depends on the picture.

use plotters::prelude::*;

use super::html::escape;

/// A line over time: `points` are (UTC microseconds, value), oldest first; `limit`, when given, is drawn as a
/// dashed level with its name (a budget, a threshold).
pub struct TimeLine<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub points: &'a [(i64, f64)],
    pub limit: Option<(&'a str, f64)>,
}

fn day(micros: i64) -> String {
    fiscus_domain::clock::rfc3339(micros).get(..10).unwrap_or("").to_string()
}

fn minute(micros: i64) -> String {
    let t = fiscus_domain::clock::rfc3339(micros);
    format!("{} {}", t.get(..10).unwrap_or(""), t.get(11..16).unwrap_or(""))
}

/// The SVG of the line, or `None` when there is nothing to draw or plotters refuses.
fn svg(line: &TimeLine<'_>) -> Option<String> {
    let (first, last) = (line.points.first()?, line.points.last()?);
    let (x0, x1) = (first.0, last.0.max(first.0 + 1));
    let y_max = line.points.iter().map(|p| p.1).chain(line.limit.map(|l| l.1)).fold(0.0f64, f64::max).max(1.0) * 1.05;
    let span_days = (x1 - x0) / 86_400_000_000;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 260)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(56)
            .build_cartesian_2d(x0..x1, 0.0..y_max)
            .ok()?;
        let label = |x: &i64| if span_days >= 2 { day(*x) } else { minute(*x) };
        chart
            .configure_mesh()
            .x_labels(4)
            .y_labels(5)
            .x_label_formatter(&label)
            .y_desc(line.y_label)
            .light_line_style(RGBColor(235, 235, 240))
            .draw()
            .ok()?;
        chart.draw_series(LineSeries::new(line.points.iter().copied(), RGBColor(11, 87, 208).stroke_width(2))).ok()?;
        if let Some((_, level)) = line.limit {
            // The limit in the console's "stop" red, dashed, so it differs from the line by more than colour.
            let style = RGBColor(179, 38, 30).stroke_width(2);
            chart.draw_series(DashedLineSeries::new([(x0, level), (x1, level)], 8, 6, style)).ok()?;
        }
        root.present().ok()?;
    }
    Some(out)
}

/// The figure: the chart (marked as an image with its text alternative) and the data table behind it.
pub fn time_line(line: &TimeLine<'_>) -> String {
    let Some(last) = line.points.last() else {
        return format!("<p class=\"muted\">{}: nothing to draw yet.</p>", escape(line.title));
    };
    let limit = line.limit.map(|(name, level)| format!("; {name} {level} (dashed)")).unwrap_or_default();
    let summary = format!(
        "{}: {} points from {} to {}; latest {} = {}{limit}",
        line.title,
        line.points.len(),
        minute(line.points[0].0),
        minute(last.0),
        line.y_label,
        last.1
    );
    let picture = svg(line)
        .map(|s| s.replacen("<svg ", &format!("<svg role=\"img\" aria-label=\"{}\" ", escape(&summary)), 1))
        .unwrap_or_default();
    let mut rows = String::new();
    for (at, v) in line.points {
        rows.push_str(&format!("<tr><td>{}</td><td>{v}</td></tr>", fiscus_domain::clock::rfc3339(*at)));
    }
    format!(
        "<figure class=\"chart\">{picture}<figcaption>{caption}</figcaption>\
         <details><summary>The figures behind the chart</summary><table><tr><th>At (UTC)</th><th>{y}</th></tr>{rows}</table></details></figure>",
        caption = escape(&summary),
        y = escape(line.y_label),
    )
}

/// Values by name, drawn as horizontal bars (weights, risk contributions, counts by outcome).
pub struct Bars<'a> {
    pub title: &'a str,
    pub unit: &'a str,
    pub items: &'a [(String, f64)],
}

fn bars_svg(b: &Bars<'_>) -> Option<String> {
    let n = b.items.len();
    if n == 0 {
        return None;
    }
    let lo = b.items.iter().map(|i| i.1).fold(0.0f64, f64::min);
    let hi = b.items.iter().map(|i| i.1).fold(0.0f64, f64::max).max(lo + 1e-9);
    let pad = (hi - lo) * 0.05;
    let height = u32::try_from(60 + 28 * n.min(40)).unwrap_or(1200);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, height)).into_drawing_area();
        root.fill(&WHITE).ok()?;
        let names: Vec<&str> = b.items.iter().map(|i| i.0.as_str()).collect();
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(32)
            .y_label_area_size(140)
            .build_cartesian_2d((lo - pad)..(hi + pad), (0..n).into_segmented())
            .ok()?;
        let label = |y: &SegmentValue<usize>| match y {
            SegmentValue::CenterOf(i) => names.get(*i).map(|s| s.to_string()).unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .x_desc(b.unit)
            .light_line_style(RGBColor(235, 235, 240))
            .draw()
            .ok()?;
        chart
            .draw_series(b.items.iter().enumerate().map(|(i, (_, v))| {
                let (from, to) = if *v >= 0.0 { (0.0, *v) } else { (*v, 0.0) };
                let mut bar = Rectangle::new(
                    [(from, SegmentValue::Exact(i)), (to, SegmentValue::Exact(i + 1))],
                    RGBColor(11, 87, 208).filled(),
                );
                bar.set_margin(4, 4, 0, 0);
                bar
            }))
            .ok()?;
        root.present().ok()?;
    }
    Some(out)
}

/// The figure for bars: the chart with its text alternative, and the values in a table.
pub fn bars(b: &Bars<'_>) -> String {
    if b.items.is_empty() {
        return format!("<p class=\"muted\">{}: nothing to draw yet.</p>", escape(b.title));
    }
    let listed: Vec<String> = b.items.iter().take(12).map(|(k, v)| format!("{k} {}", round(*v))).collect();
    let more = if b.items.len() > 12 { format!(" and {} more", b.items.len() - 12) } else { String::new() };
    let summary = format!("{} ({}): {}{more}", b.title, b.unit, listed.join(", "));
    let picture = bars_svg(b)
        .map(|s| s.replacen("<svg ", &format!("<svg role=\"img\" aria-label=\"{}\" ", escape(&summary)), 1))
        .unwrap_or_default();
    let mut rows = String::new();
    for (k, v) in b.items {
        rows.push_str(&format!("<tr><td>{}</td><td>{}</td></tr>", escape(k), round(*v)));
    }
    format!(
        "<figure class=\"chart\">{picture}<figcaption>{caption}</figcaption>\
         <details><summary>The figures behind the chart</summary><table><tr><th>Name</th><th>{unit}</th></tr>{rows}</table></details></figure>",
        caption = escape(&summary),
        unit = escape(b.unit),
    )
}

/// Four significant decimals at most: what a person reads, not what the engine holds.
fn round(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn bars_are_an_svg_image_with_every_value_in_words_and_in_a_table() {
        let items = vec![("MSFT".to_string(), 40.0), ("AAPL".to_string(), 35.5), ("cash".to_string(), -2.25)];
        let html = super::bars(&super::Bars { title: "Weights", unit: "% of value", items: &items });
        assert!(
            html.contains("<svg role=\"img\" aria-label=\"Weights (% of value): MSFT 40, AAPL 35.5, cash -2.25\""),
            "{html}"
        );
        assert!(html.contains("<tr><td>AAPL</td><td>35.5</td></tr>"), "{html}");
        assert!(html.contains("<rect") && !html.contains("style=\""), "{html}");
        let empty = super::bars(&super::Bars { title: "Weights", unit: "%", items: &[] });
        assert!(empty.contains("nothing to draw"));
    }

    #[test]
    fn a_time_line_is_an_svg_image_with_its_words_and_figures() {
        let points = [(1_700_000_000_000_000, 1.0), (1_700_003_600_000_000, 5.0), (1_700_007_200_000_000, 12.0)];
        let html = super::time_line(&super::TimeLine {
            title: "Audit chain",
            y_label: "events",
            points: &points,
            limit: None,
        });
        assert!(html.contains("<svg role=\"img\" aria-label=\"Audit chain: 3 points"), "{html}");
        assert!(html.contains("latest events = 12"), "{html}");
        assert!(html.contains("<table>") && html.contains("2023-11-14T22:13:20Z"), "{html}");
        assert!(!html.contains("style=\""), "no inline style (the console's CSP allows none): {html}");
        let empty =
            super::time_line(&super::TimeLine { title: "Audit chain", y_label: "events", points: &[], limit: None });
        assert!(empty.contains("nothing to draw"));
    }
}

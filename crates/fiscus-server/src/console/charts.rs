//! Pictures where people would rather look than read, drawn on the server as SVG by `plotters` (no script,
//! nothing fetched): each chart is a `figure` with a text alternative naming what it shows and its latest
//! value, and the figures behind it in a table under a disclosure, so no reader depends on the picture.

use plotters::prelude::*;

use super::html::escape;

/// A line over time: `points` are (UTC microseconds, value), oldest first.
pub struct TimeLine<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub points: &'a [(i64, f64)],
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
    let y_max = line.points.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1.0) * 1.05;
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
        root.present().ok()?;
    }
    Some(out)
}

/// The figure: the chart (marked as an image with its text alternative) and the data table behind it.
pub fn time_line(line: &TimeLine<'_>) -> String {
    let Some(last) = line.points.last() else {
        return format!("<p class=\"muted\">{}: nothing to draw yet.</p>", escape(line.title));
    };
    let summary = format!(
        "{}: {} points from {} to {}; latest {} = {}",
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_time_line_is_an_svg_image_with_its_words_and_figures() {
        let points = [(1_700_000_000_000_000, 1.0), (1_700_003_600_000_000, 5.0), (1_700_007_200_000_000, 12.0)];
        let html = super::time_line(&super::TimeLine { title: "Audit chain", y_label: "events", points: &points });
        assert!(html.contains("<svg role=\"img\" aria-label=\"Audit chain: 3 points"), "{html}");
        assert!(html.contains("latest events = 12"), "{html}");
        assert!(html.contains("<table>") && html.contains("2023-11-14T22:13:20Z"), "{html}");
        assert!(!html.contains("style=\""), "no inline style (the console's CSP allows none): {html}");
        let empty = super::time_line(&super::TimeLine { title: "Audit chain", y_label: "events", points: &[] });
        assert!(empty.contains("nothing to draw"));
    }
}

//! Inline SVG charts from small primitives: a linear [`Scale`], "nice"
//! [`ticks`], and a [`Plot`] that draws axes with labelled ticks, lines,
//! steps, markers, shaded bands, points with error bars, and a legend. A chart
//! is a short function that sets two scales and adds its series.
//!
//! Colours are CSS classes (`s0`..`s5`, `band`, `mark`, `thr`), so the page's
//! stylesheet gives them light and dark values and print styles. Coordinates
//! are rounded to 0.1 px, so the output is small and deterministic.
use std::fmt::Write;

use super::escape;

/// A linear map from a data domain onto a pixel range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub d0: f64,
    pub d1: f64,
    pub r0: f64,
    pub r1: f64,
}

impl Scale {
    /// A scale over `[d0, d1]`; an empty or inverted domain is widened so
    /// that the map stays finite.
    pub fn new(d0: f64, d1: f64, r0: f64, r1: f64) -> Self {
        let (d0, d1) = if !(d0.is_finite() && d1.is_finite()) {
            (0.0, 1.0)
        } else if d1 > d0 {
            (d0, d1)
        } else if d0 == 0.0 {
            (0.0, 1.0)
        } else {
            let pad = d0.abs() * 0.05;
            (d0 - pad, d0 + pad)
        };
        Scale { d0, d1, r0, r1 }
    }

    /// A scale whose domain is extended to the outer nice ticks of `[lo, hi]`.
    pub fn nice(lo: f64, hi: f64, r0: f64, r1: f64, count: usize) -> Self {
        let s = Scale::new(lo, hi, r0, r1);
        let step = tick_step(s.d0, s.d1, count);
        Scale::new(
            (s.d0 / step).floor() * step,
            (s.d1 / step).ceil() * step,
            r0,
            r1,
        )
    }

    pub fn map(&self, v: f64) -> f64 {
        self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }

    /// `map`, held inside the range (a value off the chart sits on its edge).
    pub fn clamp_map(&self, v: f64) -> f64 {
        let (lo, hi) = if self.r0 <= self.r1 {
            (self.r0, self.r1)
        } else {
            (self.r1, self.r0)
        };
        self.map(v).clamp(lo, hi)
    }
}

/// The step of about `count` ticks over `[lo, hi]`: 1, 2 or 5 times a power of ten.
pub fn tick_step(lo: f64, hi: f64, count: usize) -> f64 {
    let span = (hi - lo).abs();
    if !span.is_finite() || span == 0.0 {
        return 1.0;
    }
    let raw = span / count.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Tick values: the multiples of the nice step that lie in `[lo, hi]`.
pub fn ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    let step = tick_step(lo, hi, count);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last.min(first + 100))
        .map(|i| {
            let v = i as f64 * step;
            // -0 and 0.6000000000000001 come out as 0 and 0.6: rounded to
            // the step's decimals.
            if v.abs() < step * 1e-9 {
                0.0
            } else {
                let decimals = (-step.log10().floor()).max(0.0) as usize;
                format!("{v:.decimals$}").parse().unwrap_or(v)
            }
        })
        .collect()
}

/// A number for people: at most 3 decimals, no trailing zeros, thousands
/// as `k`/`M` when large.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    let (v, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let a = v.abs();
    let digits = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else if a >= 0.01 || a == 0.0 {
        3
    } else {
        // Small values keep two significant digits.
        ((-a.log10().floor()) as usize + 1).min(12)
    };
    let mut s = format!("{v:.digits$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    s.push_str(suffix);
    s
}

/// A pixel coordinate, rounded to 0.1.
fn px(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// One chart: a fixed frame, two scales, and the SVG drawn so far.
#[derive(Debug)]
pub struct Plot {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    pub x: Scale,
    pub y: Scale,
    body: String,
    legend: Vec<(String, String)>,
}

impl Plot {
    /// A plot of `width`×`height` px over the data domains `x` and `y`
    /// (extended to nice ticks).
    pub fn new(width: f64, height: f64, x: (f64, f64), y: (f64, f64)) -> Self {
        let (left, right, top, bottom) = (64.0, 16.0, 12.0, 44.0);
        Plot {
            width,
            height,
            left,
            right,
            top,
            bottom,
            x: Scale::nice(x.0, x.1, left, width - right, 6),
            y: Scale::nice(y.0, y.1, height - bottom, top, 5),
            body: String::new(),
            legend: Vec::new(),
        }
    }

    /// A plot with one row per category on the y axis (row `i` at `y = i`,
    /// the first at the top) and room on the left for their names.
    pub fn categories(width: f64, x: (f64, f64), rows: usize) -> Self {
        let (left, right, top, bottom) = (190.0, 16.0, 12.0, 44.0);
        let height = top + bottom + 22.0 * rows.max(1) as f64;
        Plot {
            width,
            height,
            left,
            right,
            top,
            bottom,
            x: Scale::nice(x.0, x.1, left, width - right, 6),
            y: Scale::new(-0.5, rows.max(1) as f64 - 0.5, top, height - bottom),
            body: String::new(),
            legend: Vec::new(),
        }
    }

    /// The x axis's grid lines and tick labels (formatted by `fx`), shared by
    /// both kinds of axes.
    fn x_ticks(&mut self, fx: &impl Fn(f64) -> String) {
        let (y0, y1) = (self.height - self.bottom, self.top);
        for t in ticks(self.x.d0, self.x.d1, 6) {
            let x = px(self.x.map(t));
            let _ = write!(
                self.body,
                "<line class=\"grid\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                px(y0),
                px(y1),
                px(y0 + 14.0),
                escape::text(&fx(t))
            );
        }
    }

    /// Axes of a [`Plot::categories`] plot: x ticks (formatted by `fx`) and
    /// the category names, the left margin widened to fit the longest one
    /// (about 6.5 px a character, at most half the width).
    pub fn category_axes(&mut self, x_label: &str, names: &[String], fx: impl Fn(f64) -> String) {
        let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let left = (6.5 * longest as f64 + 14.0).clamp(self.left, self.width / 2.0);
        if left > self.left {
            self.left = left;
            self.x = Scale::new(self.x.d0, self.x.d1, left, self.width - self.right);
        }
        let (x0, x1) = (self.left, self.width - self.right);
        let y0 = self.height - self.bottom;
        self.body.push_str("<g class=\"axis\">");
        self.x_ticks(&fx);
        let b = &mut self.body;
        for (i, n) in names.iter().enumerate() {
            let _ = write!(
                b,
                "<text x=\"{}\" y=\"{}\" dy=\"0.32em\" text-anchor=\"end\">{}</text>",
                px(x0 - 6.0),
                px(self.y.map(i as f64)),
                escape::text(n)
            );
        }
        let _ = write!(
            b,
            "<line class=\"frame\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/><text class=\"label\" x=\"{3}\" y=\"{4}\" text-anchor=\"middle\">{5}</text></g>",
            px(x0),
            px(x1),
            px(y0),
            px((x0 + x1) / 2.0),
            px(self.height - 8.0),
            escape::text(x_label)
        );
    }

    /// Horizontal interval bars with a point: `(row, value, lo, hi, class, hover)`.
    pub fn intervals(&mut self, items: &[(usize, f64, f64, f64, String, String)]) {
        for (row, v, lo, hi, class, hover) in items {
            let y = px(self.y.map(*row as f64));
            let _ = write!(self.body, "<g class=\"pt {}\">", escape::attr(class));
            if lo.is_finite() && hi.is_finite() {
                let _ = write!(
                    self.body,
                    "<line x1=\"{}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke-width=\"3\"/>",
                    px(self.x.clamp_map(*lo)),
                    px(self.x.clamp_map(*hi))
                );
            }
            if v.is_finite() {
                let _ = write!(
                    self.body,
                    "<circle cx=\"{}\" cy=\"{y}\" r=\"4\" data-x=\"{v}\"><title>{}</title></circle>",
                    px(self.x.clamp_map(*v)),
                    escape::text(hover)
                );
            }
            self.body.push_str("</g>");
        }
    }

    /// Axes, grid lines and tick labels, with each axis' label (units included).
    pub fn axes(&mut self, x_label: &str, y_label: &str) {
        self.axes_with(x_label, y_label, fmt_num, fmt_num)
    }

    /// [`Plot::axes`] with own tick label formats.
    pub fn axes_with(
        &mut self,
        x_label: &str,
        y_label: &str,
        fx: impl Fn(f64) -> String,
        fy: impl Fn(f64) -> String,
    ) {
        let (x0, x1) = (self.left, self.width - self.right);
        let (y0, y1) = (self.height - self.bottom, self.top);
        self.body.push_str("<g class=\"axis\">");
        self.x_ticks(&fx);
        let b = &mut self.body;
        for t in ticks(self.y.d0, self.y.d1, 5) {
            let y = px(self.y.map(t));
            let _ = write!(
                b,
                "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/><text x=\"{}\" y=\"{y}\" dy=\"0.32em\" text-anchor=\"end\">{}</text>",
                px(x0),
                px(x1),
                px(x0 - 5.0),
                escape::text(&fy(t))
            );
        }
        let _ = write!(
            b,
            "<line class=\"frame\" x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\"/><line class=\"frame\" x1=\"{0}\" x2=\"{0}\" y1=\"{2}\" y2=\"{3}\"/>",
            px(x0),
            px(x1),
            px(y0),
            px(y1)
        );
        let _ = write!(
            b,
            "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            px((x0 + x1) / 2.0),
            px(self.height - 8.0),
            escape::text(x_label)
        );
        let _ = write!(
            b,
            "<text class=\"label\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            px((y0 + y1) / 2.0),
            escape::text(y_label)
        );
        b.push_str("</g>");
    }

    fn path_d(&self, points: &[(f64, f64)], step: bool) -> String {
        let mut d = String::with_capacity(points.len() * 12);
        let mut prev: Option<String> = None;
        for (i, &(x, y)) in points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .enumerate()
        {
            let (sx, sy) = (px(self.x.clamp_map(x)), px(self.y.clamp_map(y)));
            if i == 0 {
                let _ = write!(d, "M{sx} {sy}");
            } else {
                if step {
                    if let Some(py) = &prev {
                        let _ = write!(d, "H{sx}V{sy}");
                        let _ = py;
                        prev = Some(sy);
                        continue;
                    }
                }
                let _ = write!(d, "L{sx} {sy}");
            }
            prev = Some(sy);
        }
        d
    }

    /// A line through `points` (data coordinates), as one `<path>`.
    pub fn line(&mut self, points: &[(f64, f64)], class: &str, name: &str) {
        let d = self.path_d(points, false);
        if d.is_empty() {
            return;
        }
        let _ = write!(
            self.body,
            "<path class=\"ln {}\" d=\"{d}\"><title>{}</title></path>",
            escape::attr(class),
            escape::text(name)
        );
        self.legend_entry(class, name);
    }

    /// A step line (horizontal, then vertical), as a CDF is drawn.
    pub fn step(&mut self, points: &[(f64, f64)], class: &str, name: &str) {
        let d = self.path_d(points, true);
        if d.is_empty() {
            return;
        }
        let _ = write!(
            self.body,
            "<path class=\"ln {}\" d=\"{d}\"><title>{}</title></path>",
            escape::attr(class),
            escape::text(name)
        );
        self.legend_entry(class, name);
    }

    /// A filled area between `lo` and `hi` over shared x values (an interval band).
    pub fn area(&mut self, xs: &[f64], lo: &[f64], hi: &[f64], class: &str) {
        let pts: Vec<(f64, f64)> = xs
            .iter()
            .zip(hi)
            .map(|(x, y)| (*x, *y))
            .chain(xs.iter().zip(lo).rev().map(|(x, y)| (*x, *y)))
            .collect();
        let d = self.path_d(&pts, false);
        if d.is_empty() {
            return;
        }
        let _ = write!(
            self.body,
            "<path class=\"area {}\" d=\"{d}Z\"/>",
            escape::attr(class)
        );
    }

    /// The pixel row of the plot area's top edge.
    fn top_px(&self) -> f64 {
        self.y.r0.min(self.y.r1)
    }

    /// A vertical marker at `x` with a short label at its top, on label
    /// row `row` (markers close together take different rows).
    pub fn vmark(&mut self, x: f64, class: &str, label: &str, row: usize) {
        if !x.is_finite() || x < self.x.d0 || x > self.x.d1 {
            return;
        }
        let at = self.x.map(x);
        let sx = px(at);
        // A label that would run past the plot's right edge is set to the
        // marker's left instead (about 6 px a character).
        let room = self.x.r0.max(self.x.r1) - at;
        let side = if room < 6.0 * label.chars().count() as f64 + 6.0 {
            "dx=\"-3\" text-anchor=\"end\""
        } else {
            "dx=\"3\""
        };
        let _ = write!(
            self.body,
            "<line class=\"{}\" x1=\"{sx}\" x2=\"{sx}\" y1=\"{}\" y2=\"{}\"/><text class=\"mk\" x=\"{sx}\" {side} y=\"{}\">{}</text>",
            escape::attr(class),
            px(self.y.r0),
            px(self.y.r1),
            px(self.top_px() + 10.0 + 11.0 * (row % 4) as f64),
            escape::text(label)
        );
    }

    /// A note at the top right of the plot area (e.g. a marker off the axis).
    pub fn note(&mut self, text: &str) {
        let _ = write!(
            self.body,
            "<text class=\"mk\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            px(self.x.r1 - 4.0),
            px(self.y.r0.max(self.y.r1) - 6.0),
            escape::text(text)
        );
    }

    /// A horizontal marker at `y` with a label at its right end.
    pub fn hmark(&mut self, y: f64, class: &str, label: &str) {
        if !y.is_finite() || y < self.y.d0 || y > self.y.d1 {
            return;
        }
        let sy = px(self.y.map(y));
        let _ = write!(
            self.body,
            "<line class=\"{}\" x1=\"{}\" x2=\"{}\" y1=\"{sy}\" y2=\"{sy}\"/><text class=\"mk\" x=\"{}\" y=\"{sy}\" dy=\"-3\" text-anchor=\"end\">{}</text>",
            escape::attr(class),
            px(self.x.r0),
            px(self.x.r1),
            px(self.x.r1),
            escape::text(label)
        );
    }

    /// A shaded vertical band from `x0` to `x1` (a case window), labelled
    /// on label row `row` (so adjacent bands' labels do not overlap).
    pub fn xband(&mut self, x0: f64, x1: f64, class: &str, label: &str, row: usize) {
        if !(x0.is_finite() && x1.is_finite()) {
            return;
        }
        let a = self.x.clamp_map(x0.min(x1));
        let b = self.x.clamp_map(x0.max(x1));
        let _ = write!(
            self.body,
            "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect><text class=\"mk\" x=\"{}\" dx=\"2\" y=\"{}\">{}</text>",
            escape::attr(class),
            px(a),
            px(self.y.r1),
            px((b - a).max(0.5)),
            px(self.y.r0 - self.y.r1),
            escape::text(label),
            px(a),
            px(self.top_px() + 10.0 + 11.0 * (row % 3) as f64),
            escape::text(label)
        );
    }

    /// Bars from the x axis, one per `(x0, x1, y)` bin.
    pub fn bars(&mut self, bins: &[(f64, f64, f64)], class: &str, name: &str) {
        let mut d = String::new();
        let base = self.y.clamp_map(self.y.d0.max(0.0));
        for &(x0, x1, y) in bins {
            if !(x0.is_finite() && x1.is_finite() && y.is_finite()) || y == 0.0 {
                continue;
            }
            let (a, b) = (self.x.clamp_map(x0), self.x.clamp_map(x1));
            let top = self.y.clamp_map(y);
            let _ = write!(
                d,
                "M{} {}H{}V{}H{}Z",
                px(a),
                px(base),
                px(b),
                px(top),
                px(a)
            );
        }
        if d.is_empty() {
            return;
        }
        let _ = write!(
            self.body,
            "<path class=\"bar {}\" d=\"{d}\"><title>{}</title></path>",
            escape::attr(class),
            escape::text(name)
        );
        self.legend_entry(class, name);
    }

    /// Points with vertical error bars `(x, y, lo, hi)`; `hover` is each point's tooltip.
    pub fn points(&mut self, pts: &[(f64, f64, f64, f64)], hover: &[String], class: &str) {
        let _ = write!(self.body, "<g class=\"pt {}\">", escape::attr(class));
        for (i, &(x, y, lo, hi)) in pts.iter().enumerate() {
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            let sx = px(self.x.clamp_map(x));
            if lo.is_finite() && hi.is_finite() {
                let _ = write!(
                    self.body,
                    "<line x1=\"{sx}\" x2=\"{sx}\" y1=\"{}\" y2=\"{}\"/>",
                    px(self.y.clamp_map(lo)),
                    px(self.y.clamp_map(hi))
                );
            }
            // The exact values ride along (data-x, data-y), so a reader or a
            // test gets the figure itself, not its pixel.
            let _ = write!(
                self.body,
                "<circle cx=\"{sx}\" cy=\"{}\" r=\"3\" data-x=\"{x}\" data-y=\"{y}\"><title>{}</title></circle>",
                px(self.y.clamp_map(y)),
                escape::text(hover.get(i).map_or("", String::as_str))
            );
        }
        self.body.push_str("</g>");
    }

    /// Adds a legend entry (series drawn as points only have none of their own).
    pub fn legend_entry(&mut self, class: &str, name: &str) {
        if !name.is_empty() && !self.legend.iter().any(|(c, n)| c == class && n == name) {
            self.legend.push((class.to_owned(), name.to_owned()));
        }
    }

    /// The finished `<svg>`, titled (for screen readers), with its legend in
    /// a row of its own below the x axis' label, so it never covers data.
    pub fn finish(self, title: &str) -> String {
        let mut s = String::with_capacity(self.body.len() + 512);
        let height = if self.legend.is_empty() {
            self.height
        } else {
            self.height + 18.0
        };
        let _ = write!(
            s,
            "<svg class=\"chart\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
            px(self.width),
            px(height),
            px(self.width),
            px(height),
            escape::text(title)
        );
        s.push_str(&self.body);
        let mut lx = self.left;
        let ly = self.height + 3.0;
        if !self.legend.is_empty() {
            s.push_str("<g class=\"legend\">");
            for (class, name) in &self.legend {
                let _ = write!(
                    s,
                    "<rect class=\"sw {}\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\"/><text x=\"{}\" y=\"{}\">{}</text>",
                    escape::attr(class),
                    px(lx),
                    px(ly),
                    px(lx + 14.0),
                    px(ly + 9.0),
                    escape::text(name)
                );
                lx += 24.0 + 6.5 * name.chars().count() as f64;
            }
            s.push_str("</g>");
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_maps_ends_and_middle() {
        let s = Scale::new(0.0, 10.0, 100.0, 200.0);
        assert_eq!(s.map(0.0), 100.0);
        assert_eq!(s.map(10.0), 200.0);
        assert_eq!(s.map(2.5), 125.0);
        // Inverted pixel range (y axes).
        let y = Scale::new(0.0, 1.0, 300.0, 0.0);
        assert_eq!(y.map(0.25), 225.0);
        assert_eq!(y.clamp_map(2.0), 0.0);
    }

    #[test]
    fn degenerate_domains_stay_finite() {
        for (a, b) in [(5.0, 5.0), (0.0, 0.0), (f64::NAN, 1.0), (3.0, 1.0)] {
            let s = Scale::new(a, b, 0.0, 100.0);
            assert!(s.map(a.min(1.0)).is_finite(), "{a} {b}");
            assert!(s.d1 > s.d0);
        }
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(ticks(13.0, 47.0, 4), vec![20.0, 30.0, 40.0]);
        assert_eq!(tick_step(0.0, 0.3, 3), 0.1);
        assert_eq!(ticks(-1.0, 1.0, 4), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        let s = Scale::nice(3.0, 97.0, 0.0, 1.0, 5);
        assert_eq!((s.d0, s.d1), (0.0, 100.0));
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.3), "0.3");
        assert_eq!(fmt_num(12.345), "12.3");
        assert_eq!(fmt_num(250.0), "250");
        assert_eq!(fmt_num(12_500.0), "12.5k");
        assert_eq!(fmt_num(3_000_000.0), "3M");
        assert_eq!(fmt_num(0.0005), "0.0005");
        assert_eq!(fmt_num(0.00123), "0.0012");
        assert_eq!(fmt_num(f64::NAN), "–");
    }

    #[test]
    fn a_plot_is_one_titled_svg_with_escaped_text() {
        let mut p = Plot::new(400.0, 200.0, (0.0, 10.0), (0.0, 1.0));
        p.axes("latency (ms)", "fraction <= x");
        p.step(&[(0.0, 0.0), (5.0, 0.5), (10.0, 1.0)], "s0", "<script>");
        p.vmark(5.0, "mark", "p50", 0);
        p.vmark(50.0, "mark", "off the chart", 1);
        let s = p.finish("TTFT of \"c1\"");
        assert!(s.starts_with("<svg ") && s.ends_with("</svg>"));
        assert!(s.contains("<title>TTFT of \"c1\"</title>"));
        assert!(s.contains("&lt;script&gt;"));
        assert!(!s.contains("<script"));
        assert!(!s.contains("off the chart"));
        // The step path: right, then up.
        assert!(s.contains("d=\"M64 156H"), "{s}");
        assert!(s.contains("fraction &lt;= x"));
    }

    #[test]
    fn bars_are_one_path() {
        let mut p = Plot::new(400.0, 200.0, (0.0, 3.0), (0.0, 10.0));
        p.bars(
            &[(0.0, 1.0, 5.0), (1.0, 2.0, 0.0), (2.0, 3.0, 10.0)],
            "s1",
            "sent",
        );
        let s = p.finish("arrivals");
        assert_eq!(s.matches("<path").count(), 1);
        assert_eq!(s.matches('Z').count(), 2);
    }
}

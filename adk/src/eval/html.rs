//! The HTML report: one self-contained page (no scripts, no links) with the plots drawn
//! here as inline SVG: the scores per case, the latency and tokens per case, and, given
//! a baseline, each case's scores and latency then and now; then each case's turns.

use std::fmt::Write;

use super::report::{CaseResult, EvalReport};

/// One series of bars: its name, its colour, and a value per case (`None`: no bar).
struct Series<'a> {
    name: &'a str,
    colour: &'a str,
    values: Vec<Option<f64>>,
}

/// A bar chart: one group of bars per case.
struct Chart<'a> {
    id: &'a str,
    title: &'a str,
    unit: &'a str,
    /// The top of the scale; `None`: the largest value.
    max: Option<f64>,
    labels: Vec<&'a str>,
    series: Vec<Series<'a>>,
    /// A mark across each bar of the first series' groups at this value (thresholds).
    marks: Vec<[Option<f64>; 2]>,
}

const COLOURS: [&str; 4] = ["#9bb7d4", "#1f5fa8", "#f2c48d", "#c26a00"];

impl EvalReport {
    /// The report as one self-contained HTML page with inline SVG plots (`<svg>`
    /// elements with the ids `scores`, `latency` and `tokens`, and with a baseline
    /// `baseline-scores` and `baseline-latency`), then each case's turns.
    ///
    /// ```
    /// use tower_adk::eval::EvalReport;
    ///
    /// let report: EvalReport = serde_json::from_str(r#"{"set": "empty", "cases": []}"#)?;
    /// let page = report.html(Some(&report));
    /// assert!(page.starts_with("<!DOCTYPE html>"));
    /// assert!(page.contains(r#"<svg id="scores""#));
    /// assert!(page.contains(r#"<svg id="baseline-scores""#));
    /// # Ok::<_, serde_json::Error>(())
    /// ```
    pub fn html(&self, baseline: Option<&EvalReport>) -> String {
        let mut page = String::new();
        let title = escape(&self.set);
        let passed = self.cases.iter().filter(|c| c.passed).count();
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>Evaluation: {title}</title><style>{STYLE}</style></head><body>\n\
             <h1>Evaluation: {title}</h1>\n<p class=\"{}\">{passed} of {} cases passed</p>\n",
            if self.passed() { "pass" } else { "fail" },
            self.cases.len()
        );
        let labels: Vec<&str> = self.cases.iter().map(|c| c.id.as_str()).collect();
        for chart in self.charts(&labels) {
            chart.draw(&mut page);
        }
        if let Some(baseline) = baseline {
            page.push_str("<h2>Compared with the baseline</h2>\n");
            for chart in self.comparison(baseline, &labels) {
                chart.draw(&mut page);
            }
        }
        page.push_str("<h2>Cases</h2>\n");
        for case in &self.cases {
            case_details(&mut page, case);
        }
        page.push_str("</body></html>\n");
        page
    }

    #[allow(clippy::cast_precision_loss)]
    fn charts<'a>(&'a self, labels: &[&'a str]) -> Vec<Chart<'a>> {
        let cases = &self.cases;
        vec![
            Chart {
                id: "scores",
                title: "Scores per case (marks: thresholds)",
                unit: "",
                max: Some(1.0),
                labels: labels.to_vec(),
                series: vec![
                    series("trajectory", COLOURS[1], cases, |c| c.trajectory_score),
                    series("response", COLOURS[3], cases, |c| c.response_score),
                ],
                marks: cases
                    .iter()
                    .map(|c| {
                        [
                            c.trajectory_score
                                .map(|_| c.criteria.tool_trajectory_avg_score),
                            c.response_score.map(|_| c.criteria.response_match_score),
                        ]
                    })
                    .collect(),
            },
            Chart {
                id: "latency",
                title: "Latency per case (ms)",
                unit: " ms",
                max: None,
                labels: labels.to_vec(),
                series: vec![series("latency", COLOURS[1], cases, |c| Some(c.latency_ms))],
                marks: Vec::new(),
            },
            Chart {
                id: "tokens",
                title: "Tokens per case",
                unit: "",
                max: None,
                labels: labels.to_vec(),
                series: vec![
                    series("prompt", COLOURS[0], cases, |c| {
                        Some(c.usage.prompt_tokens as f64)
                    }),
                    series("completion", COLOURS[1], cases, |c| {
                        Some(c.usage.completion_tokens as f64)
                    }),
                ],
                marks: Vec::new(),
            },
        ]
    }

    fn comparison<'a>(&'a self, baseline: &'a EvalReport, labels: &[&'a str]) -> Vec<Chart<'a>> {
        let then = |f: fn(&CaseResult) -> Option<f64>| -> Vec<Option<f64>> {
            self.cases
                .iter()
                .map(|c| baseline.case(&c.id).and_then(f))
                .collect()
        };
        let now = |f: fn(&CaseResult) -> Option<f64>| -> Vec<Option<f64>> {
            self.cases.iter().map(f).collect()
        };
        vec![
            Chart {
                id: "baseline-scores",
                title: "Scores: baseline and this run",
                unit: "",
                max: Some(1.0),
                labels: labels.to_vec(),
                series: vec![
                    Series {
                        name: "trajectory, baseline",
                        colour: COLOURS[0],
                        values: then(|c| c.trajectory_score),
                    },
                    Series {
                        name: "trajectory, now",
                        colour: COLOURS[1],
                        values: now(|c| c.trajectory_score),
                    },
                    Series {
                        name: "response, baseline",
                        colour: COLOURS[2],
                        values: then(|c| c.response_score),
                    },
                    Series {
                        name: "response, now",
                        colour: COLOURS[3],
                        values: now(|c| c.response_score),
                    },
                ],
                marks: Vec::new(),
            },
            Chart {
                id: "baseline-latency",
                title: "Latency: baseline and this run (ms)",
                unit: " ms",
                max: None,
                labels: labels.to_vec(),
                series: vec![
                    Series {
                        name: "baseline",
                        colour: COLOURS[0],
                        values: then(|c| Some(c.latency_ms)),
                    },
                    Series {
                        name: "now",
                        colour: COLOURS[1],
                        values: now(|c| Some(c.latency_ms)),
                    },
                ],
                marks: Vec::new(),
            },
        ]
    }
}

fn series<'a>(
    name: &'a str,
    colour: &'a str,
    cases: &[CaseResult],
    value: impl Fn(&CaseResult) -> Option<f64>,
) -> Series<'a> {
    Series {
        name,
        colour,
        values: cases.iter().map(value).collect(),
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 40.0;
const TOP: f64 = 28.0;

impl Chart<'_> {
    fn draw(&self, out: &mut String) {
        let top_value = self.max.unwrap_or_else(|| {
            let largest = self
                .series
                .iter()
                .flat_map(|s| s.values.iter().flatten())
                .fold(0.0_f64, |a, &b| a.max(b));
            if largest > 0.0 { largest * 1.1 } else { 1.0 }
        });
        let plot_h = HEIGHT - TOP - BOTTOM;
        let y = |v: f64| TOP + plot_h * (1.0 - (v / top_value).clamp(0.0, 1.0));
        let nothing = self.max.is_none()
            && (self.series.iter()).all(|s| s.values.iter().flatten().all(|&v| v == 0.0));
        let _ = writeln!(
            out,
            "<figure><figcaption>{}{}</figcaption>\n<svg id=\"{}\" class=\"plot\" \
             xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
             width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\">",
            escape(self.title),
            if nothing {
                " (all zero: nothing was reported)"
            } else {
                ""
            },
            self.id
        );
        // The scale: the axis, and lines at a quarter, half, three quarters and the top.
        for step in 0..=4 {
            let value = top_value * f64::from(step) / 4.0;
            let at = y(value);
            let _ = writeln!(
                out,
                "<line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{at:.1}\" y2=\"{at:.1}\" class=\"grid\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" class=\"scale\">{}</text>",
                LEFT - 4.0,
                at + 4.0,
                short(value)
            );
        }
        let groups = self.labels.len().max(1);
        #[allow(clippy::cast_precision_loss)]
        let group_w = (WIDTH - LEFT) / groups as f64;
        #[allow(clippy::cast_precision_loss)]
        let bar_w = (group_w * 0.8 / self.series.len().max(1) as f64).min(48.0);
        for (i, label) in self.labels.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let left =
                LEFT + group_w * i as f64 + (group_w - bar_w * self.series.len() as f64) / 2.0;
            for (k, series) in self.series.iter().enumerate() {
                #[allow(clippy::cast_precision_loss)]
                let x = left + bar_w * k as f64;
                let Some(value) = series.values.get(i).copied().flatten() else {
                    continue;
                };
                // A zero still shows, as a sliver on the axis.
                let top = y(value).min(HEIGHT - BOTTOM - 1.5);
                let _ = writeln!(
                    out,
                    "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
                     <title>{}: {} {}{}</title></rect>",
                    bar_w - 2.0,
                    (HEIGHT - BOTTOM - top).max(1.5),
                    series.colour,
                    escape(label),
                    escape(series.name),
                    short(value),
                    self.unit
                );
                if let Some(mark) = self.marks.get(i).and_then(|m| m.get(k).copied().flatten()) {
                    let at = y(mark);
                    let _ = writeln!(
                        out,
                        "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{at:.1}\" y2=\"{at:.1}\" class=\"mark\"/>",
                        x - 2.0,
                        x + bar_w
                    );
                }
            }
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" class=\"label\">{}</text>",
                left + bar_w * self.series.len() as f64 / 2.0,
                HEIGHT - BOTTOM + 16.0,
                escape(label)
            );
        }
        let mut x = LEFT;
        for series in &self.series {
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"6\" width=\"10\" height=\"10\" fill=\"{}\"/>\
                 <text x=\"{:.1}\" y=\"15\" class=\"legend\">{}</text>",
                series.colour,
                x + 14.0,
                escape(series.name)
            );
            #[allow(clippy::cast_precision_loss)]
            let step = 30.0 + 7.0 * series.name.chars().count() as f64;
            x += step;
        }
        out.push_str("</svg></figure>\n");
    }
}

/// A case's turns: each message, answer, calls and checks.
fn case_details(out: &mut String, case: &CaseResult) {
    let verdict = if case.passed { "pass" } else { "fail" };
    let _ = writeln!(
        out,
        "<details{}><summary class=\"{verdict}\">{} — {verdict}</summary>",
        if case.passed { "" } else { " open" },
        escape(&case.id)
    );
    if let Some(error) = &case.error {
        let _ = writeln!(out, "<p class=\"fail\">{}</p>", escape(error));
    }
    for (n, turn) in case.turns.iter().enumerate() {
        let calls: Vec<String> = turn
            .tool_calls
            .iter()
            .map(|c| format!("{}({})", c.name, c.args))
            .collect();
        let _ = write!(
            out,
            "<h3>Turn {}</h3><p><b>user:</b> {}</p><p><b>answer:</b> {}</p><p><b>calls:</b> {}</p><ul>",
            n + 1,
            escape(&turn.user),
            escape(&turn.response),
            escape(&calls.join(", "))
        );
        for check in turn.trajectory.iter().chain(&turn.response_checks) {
            let _ = write!(
                out,
                "<li>{} {}: {}</li>",
                escape(&check.kind),
                short(check.score),
                escape(&check.detail)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</details>\n");
}

/// A number as a label: whole numbers without decimals, others with two.
fn short(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
figure{margin:1em 0}figcaption{font-weight:600;margin-bottom:.3em}\
.grid{stroke:#ddd}.mark{stroke:#d00;stroke-width:2}\
.scale{font-size:10px;text-anchor:end;fill:#666}.label{font-size:11px;text-anchor:middle}\
.legend{font-size:11px}.pass{color:#1a7f37}.fail{color:#c00}\
summary{font-weight:600;cursor:pointer}h3{font-size:1em;margin:.6em 0 .2em}";

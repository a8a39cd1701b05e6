//! The audit as one self-contained HTML page (`--html FILE`): no script, no request to
//! anywhere; its charts are inline SVG, so it can be mailed and opened offline.

use std::fmt::Write;

use super::summary::{Listed, Summary};

/// Text for HTML (element content and attribute values).
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The colour of a class, a reason or a series (colour-blind safe, Okabe–Ito).
fn colour(i: usize) -> &'static str {
    const C: [&str; 8] = [
        "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
    ];
    C[i % C.len()]
}

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;\
padding:0 1rem;color:#222}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}\
table{border-collapse:collapse;margin:.5rem 0}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;\
text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.big{font-size:1.6rem;font-weight:600}.cards{display:flex;gap:1.5rem;flex-wrap:wrap}\
.card{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem}figure{margin:1rem 0}\
figcaption{font-weight:600;margin-bottom:.3rem}svg text{font:12px system-ui,sans-serif}\
code{background:#f4f4f4;padding:0 .2rem}.ok{color:#007a3d}.bad{color:#b00020}";

/// The page.
pub fn page(s: &Summary) -> String {
    let mut h = String::new();
    let span = match (&s.first, &s.last) {
        (Some(a), Some(b)) => format!("{} to {}", esc(a), esc(b)),
        _ => "no request".into(),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>robogate audit</title><style>{STYLE}</style></head><body>\
         <h1>robogate audit</h1><p>{span}</p><div class=\"cards\">"
    );
    let card = |h: &mut String, label: &str, value: String, class: &str| {
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"big {class}\">{value}</div>{}</div>",
            esc(label)
        );
    };
    card(&mut h, "requests", s.requests.to_string(), "");
    card(
        &mut h,
        "would have been refused",
        s.refused_total.to_string(),
        "",
    );
    let people_class = if s.people_refused == 0 { "ok" } else { "bad" };
    card(
        &mut h,
        "of them people's",
        s.people_refused.to_string(),
        people_class,
    );
    card(&mut h, "lines understood", s.understood.to_string(), "");
    card(&mut h, "lines skipped", s.skipped.to_string(), "");
    card(
        &mut h,
        "requests the server could not read",
        s.unreadable_requests.to_string(),
        "",
    );
    h.push_str("</div>");
    let classes: Vec<String> = s.by_class.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let categories: Vec<String> = s
        .by_category
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = write!(
        h,
        "<p>Requests by class: {}. Robots' requests by category: {}.</p>",
        esc(&classes.join(", ")),
        esc(&categories.join(", "))
    );
    h.push_str(&timeline(s));
    let refused: Vec<(String, u64)> = s.refused.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    h.push_str(&bars("Refusals by reason", "refusals-by-reason", &refused));
    let mut robots: Vec<(String, u64)> = s
        .robots
        .iter()
        .filter(|(k, _)| k.as_str() != crate::state::compliance::BROWSERS)
        .map(|(k, r)| (k.clone(), r.row.requests))
        .collect();
    robots.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    robots.truncate(15);
    h.push_str(&bars(
        "Top robots by requests (robots.txt fetches apart)",
        "top-robots",
        &robots,
    ));
    h.push_str("<h2>Refused, by robot and robots.txt line</h2><table><tr><th>robot</th><th>refused</th><th>reasons</th><th>robots.txt lines</th></tr>");
    let mut by_robot: Vec<_> = s.refused_by_robot.iter().collect();
    by_robot.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then(a.0.cmp(b.0)));
    for (name, r) in by_robot {
        let reasons: Vec<String> = r.reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let lines: Vec<String> = r
            .robots_lines
            .iter()
            .map(|(l, n)| {
                let text = s.robots_txt_lines.get(l).map_or("", String::as_str);
                format!("line {l} <code>{}</code>: {n}", esc(text))
            })
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            r.requests,
            esc(&reasons.join(", ")),
            lines.join("<br>")
        );
    }
    h.push_str("</table>");
    h.push_str("<h2>People who would have been refused</h2>");
    listed(
        &mut h,
        &s.people,
        "none: no browser User-Agent would have been refused",
    );
    h.push_str("<h2>Browser User-Agents that fetched robots.txt</h2>");
    listed(&mut h, &s.browser_user_agents_fetching_robots_txt, "none");
    h.push_str("<h2>Robots that never fetched robots.txt</h2><p>");
    match s.never_fetched_robots_txt.is_empty() {
        true => h.push_str("none"),
        false => h.push_str(&esc(&s.never_fetched_robots_txt.join(", "))),
    }
    h.push_str("</p><h2>Per robot</h2><table><tr><th>robot</th><th>requests</th><th>robots.txt fetches</th><th>without robots.txt</th><th>refused</th><th>clients</th></tr>");
    for (name, r) in &s.robots {
        let refused: u64 = r.row.refused.values().sum();
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{refused}</td><td class=\"n\">{}</td></tr>",
            esc(name),
            r.row.requests,
            r.row.robots_txt_fetches,
            r.row.without_robots_txt,
            r.clients
        );
    }
    h.push_str("</table><h2>Not judged</h2><ul>");
    for note in &s.not_judged {
        let _ = write!(h, "<li>{}</li>", esc(note));
    }
    h.push_str("</ul><h2>Files</h2><ul>");
    for f in &s.files {
        let _ = write!(
            h,
            "<li><code>{}</code> ({}): {} understood, {} skipped{}</li>",
            esc(&f.path),
            esc(&f.format),
            f.understood,
            f.skipped,
            f.error
                .as_ref()
                .map_or(String::new(), |e| format!("; {}", esc(e)))
        );
    }
    h.push_str("</ul></body></html>\n");
    h
}

fn listed(h: &mut String, list: &[Listed], none: &str) {
    if list.is_empty() {
        let _ = write!(h, "<p class=\"ok\">{}</p>", esc(none));
        return;
    }
    h.push_str(
        "<table><tr><th>client</th><th>User-Agent</th><th>requests</th><th>first path</th></tr>",
    );
    for l in list.iter().take(200) {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&l.client),
            esc(&l.user_agent),
            l.requests,
            esc(&l.first_path)
        );
    }
    h.push_str("</table>");
    if list.len() > 200 {
        let _ = write!(
            h,
            "<p>… and {} more (<code>--json</code> lists them all)</p>",
            list.len() - 200
        );
    }
}

/// Horizontal bars, one per `(label, value)`.
fn bars(title: &str, id: &str, rows: &[(String, u64)]) -> String {
    let mut h = format!(
        "<figure id=\"{id}\"><figcaption>{}</figcaption>",
        esc(title)
    );
    if rows.is_empty() {
        h.push_str("<p>none</p></figure>");
        return h;
    }
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
    let (label_w, bar_w, row_h) = (220.0, 460.0, 22.0);
    let height = row_h * rows.len() as f64 + 4.0;
    let _ = write!(
        h,
        "<svg role=\"img\" width=\"760\" height=\"{height}\" viewBox=\"0 0 760 {height}\">"
    );
    for (i, (label, value)) in rows.iter().enumerate() {
        let y = i as f64 * row_h + 2.0;
        let w = (*value as f64 / max as f64 * bar_w).max(1.0);
        let short: String = label.chars().take(32).collect();
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"><title>{}: {value}</title></rect>\
             <text x=\"{:.1}\" y=\"{}\">{value}</text>",
            label_w - 6.0,
            y + 15.0,
            esc(&short),
            row_h - 6.0,
            colour(i),
            esc(label),
            label_w + w + 4.0,
            y + 15.0,
        );
    }
    h.push_str("</svg></figure>");
    h
}

/// Requests by class over the log's span: stacked bars, one per slot, and the refusals as a
/// line over them.
fn timeline(s: &Summary) -> String {
    let t = &s.timeline;
    let mut h = String::from(
        "<figure id=\"traffic-by-class\"><figcaption>Requests by class over time</figcaption>",
    );
    let slots = t.refused.len();
    if slots == 0 {
        h.push_str("<p>no request</p></figure>");
        return h;
    }
    let totals: Vec<u64> = (0..slots)
        .map(|i| t.classes.values().map(|v| v[i]).sum())
        .collect();
    let max = totals.iter().copied().max().unwrap_or(1).max(1);
    let (left, width, height) = (50.0, 700.0, 220.0);
    let bar = width / slots as f64;
    let _ = write!(
        h,
        "<svg role=\"img\" width=\"760\" height=\"{}\" viewBox=\"0 0 760 {}\">",
        height + 50.0,
        height + 50.0
    );
    let _ = write!(
        h,
        "<text x=\"{}\" y=\"12\" text-anchor=\"end\">{max}</text><text x=\"{}\" y=\"{height}\" text-anchor=\"end\">0</text>",
        left - 4.0,
        left - 4.0
    );
    for i in 0..slots {
        let mut y = height;
        for (c, values) in t.classes.values().enumerate() {
            let v = values[i];
            if v == 0 {
                continue;
            }
            let bar_h = v as f64 / max as f64 * (height - 10.0);
            y -= bar_h;
            let _ = write!(
                h,
                "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h:.1}\" fill=\"{}\"/>",
                left + i as f64 * bar,
                (bar - 1.0).max(0.5),
                colour(c)
            );
        }
    }
    // Refusals, as a line.
    let points: Vec<String> = t
        .refused
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = left + (i as f64 + 0.5) * bar;
            let y = height - *v as f64 / max as f64 * (height - 10.0);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(
        h,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#b00020\" stroke-width=\"2\"/>",
        points.join(" ")
    );
    let mut x = left;
    for (c, name) in t.classes.keys().enumerate() {
        let _ = write!(
            h,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            height + 20.0,
            colour(c),
            x + 16.0,
            height + 30.0,
            esc(name)
        );
        x += 110.0;
    }
    let _ = write!(
        h,
        "<line x1=\"{x}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#b00020\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">refused</text>",
        height + 26.0,
        x + 12.0,
        height + 26.0,
        x + 16.0,
        height + 30.0
    );
    let _ = write!(
        h,
        "</svg><p>From {}, {} a bar.</p></figure>",
        esc(&t.start),
        humantime::format_duration(std::time::Duration::from_secs(t.step_secs))
    );
    h
}

"use strict";
// Every value comes from /status.json and reaches the page as text (textContent, text nodes):
// User-Agents, paths and robots.txt lines are written by whoever sends the requests.
(function () {
  const EVERY_MS = 3000;
  let previous = null; // {at, totals} of the last look, for rates

  // Characters that change how text around them reads without being seen (direction
  // overrides and isolates, zero-width ones): shown as their code, so that a User-Agent cannot
  // make a cell read backwards or hide words.
  const UNSEEN = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;
  function seen(text) {
    return text.replace(UNSEEN, (ch) => "\\u" + ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"));
  }
  function el(tag, cls, ...children) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === "object" ? c : document.createTextNode(seen(String(c))));
    }
    return e;
  }
  function fill(id, ...children) {
    const e = document.getElementById(id);
    e.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
    return e;
  }
  function row(cells, numeric) {
    return el("tr", null, ...cells.map((c, i) => el("td", numeric && numeric[i] ? "n" : null, c)));
  }
  function head(cells, numeric) {
    return el("tr", null, ...cells.map((c, i) => el("th", numeric && numeric[i] ? "n" : null, c)));
  }
  function where(p) {
    return p.file + (p.line ? ":" + p.line : "") + ": " + p.key + ": " + p.message;
  }

  function showPolicy(p) {
    const items = [
      ["Generation", String(p.generation)],
      ["Live since", p.live_since || "—"],
      ["Source", p.source + (p.robots_file ? " (" + p.robots_file + ")" : "")],
      ["Mode", p.mode],
    ];
    if (p.robots_fetch_failure) items.push(["Origin fetch", p.robots_fetch_failure]);
    const r = p.last_reload;
    const result = r ? r.result + " at " + r.at : "none since the start";
    const dl = fill("policy");
    for (const [k, v] of items) dl.append(el("dt", null, k), el("dd", null, v));
    dl.append(el("dt", null, "Last reload"), el("dd", r && r.result === "error" ? "bad" : "ok", result));
    const errors = r && r.result === "error"
      ? el("ul", "bad", ...r.errors.map((e) => el("li", null, where(e))))
      : null;
    fill("reload-errors", errors,
      errors ? el("div", "muted", "The last good policy (generation " + p.generation + ") keeps serving.") : null);
  }

  function showClients(c) {
    const card = (n, label) => n ? el("div", "card", el("b", null, String(n)), label) : null;
    const cards = [
      card(c.tarpits_held, "tarpits held"),
      card(c.caught, "caught clients"),
      card(c.paced_now, "paced clients now"),
      card(c.paced_requests, "paced requests"),
      card(c.paced_robots, "clients turned robot for rapid fire"),
    ].filter((x) => x);
    // Zero cards fold away.
    fill("clients", ...(cards.length ? cards : [el("div", "muted", "Nothing held: no tarpit, ban or pacing now.")]));
  }

  // "disallow 12, trap 3" from {reason: count}, zeros left out.
  function listed(counts) {
    const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([k, n]) => k + " " + n);
    return parts.length ? parts.join(", ") : "none";
  }

  function showSummary(c) {
    const line = (label, counts) => el("div", "summary",
      el("b", null, label + ": "), "by reason: " + listed(counts.by_reason) + "; by action: " + listed(counts.by_action) + ".");
    fill("refusal-summary", line("Last hour", c.last_hour), line("Since start", c.since_start));
  }

  const SVG = "http://www.w3.org/2000/svg";
  const COLOURS = ["#3d6fb6", "#c0392b", "#27ae60", "#8e44ad", "#d35400", "#16a085", "#7f8c8d", "#b7950b"];
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    for (const c of children) e.appendChild(typeof c === "object" ? c : document.createTextNode(seen(String(c))));
    return e;
  }
  // A line chart of `series` ({name: [values per second]}) over `times` (ms since the epoch,
  // one per value), as inline SVG: x by time (a gap in the samples shows as one), y from 0 to
  // the highest value, and a legend that wraps onto as many rows as it needs.
  function chart(id, title, times, series) {
    const W = 560, L = 52, R = 12, T = 22, PLOT = 140;
    const names = Object.keys(series).filter((n) => series[n].some((v) => v > 0));
    const top = Math.max(1e-9, ...names.flatMap((n) => series[n]));
    const first = times.length ? times[0] : 0, last = times.length ? times[times.length - 1] : 0;
    const x = (t) => L + (last > first ? ((t - first) / (last - first)) * (W - L - R) : 0);
    const y = (v) => T + (1 - v / top) * PLOT;
    const bottom = T + PLOT;
    // The legend's rows: an entry is a swatch and its name, about 7 px a character.
    const legend = [];
    let lx = L, ly = bottom + 34;
    names.forEach((n, k) => {
      const w = 30 + n.length * 7;
      if (lx > L && lx + w > W - R) { lx = L; ly += 16; }
      legend.push({ n, colour: COLOURS[k % COLOURS.length], lx, ly });
      lx += w;
    });
    const H = (legend.length ? ly : bottom + 18) + 8;
    const root = svg("svg", { id, class: "chart", width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": title });
    const value = (v) => (v < 10 ? v.toFixed(2) : String(Math.round(v))) + "/s";
    root.append(svg("text", { x: L, y: 14, class: "title" }, title),
      svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: bottom }),
      svg("line", { class: "axis", x1: L, y1: bottom, x2: W - R, y2: bottom }),
      svg("text", { x: L - 4, y: T + 4, "text-anchor": "end" }, value(names.length ? top : 0)),
      svg("text", { x: L - 4, y: bottom, "text-anchor": "end" }, "0"));
    if (times.length) {
      const clock = (ms) => new Date(ms).toISOString().slice(11, 19);
      root.append(svg("text", { x: L, y: bottom + 14 }, clock(first)),
        svg("text", { x: W - R, y: bottom + 14, "text-anchor": "end" }, clock(last) + " UTC"));
    }
    if (!names.length) {
      root.append(svg("text", { x: L + 10, y: T + 30 }, times.length ? "none in the last hour" : "nothing yet: the first point comes one sampling interval after the start"));
    }
    for (const { n, colour, lx, ly } of legend) {
      const values = series[n];
      const points = values.map((v, i) => x(times[i]).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
      root.append(svg("polyline", { class: "series", "data-series": n, points, fill: "none", stroke: colour, "stroke-width": 2 }));
      // A single point draws no line: a dot shows it.
      if (values.length === 1) root.append(svg("circle", { cx: x(times[0]), cy: y(values[0]), r: 3, fill: colour }));
      root.append(svg("rect", { x: lx, y: ly - 10, width: 10, height: 10, fill: colour }),
        svg("text", { x: lx + 14, y: ly }, n));
    }
    return root;
  }

  function showCharts(h) {
    const times = h.points.map((p) => p.at);
    const series = (key) => {
      const out = {};
      for (const p of h.points) for (const [k, v] of Object.entries(p[key])) (out[k] = out[k] || []).push(v);
      return out;
    };
    fill("charts",
      chart("requests-chart", "Requests per second, by class", times, series("requests")),
      chart("refusals-chart", "Refusals per second, by reason", times, series("refusals")));
  }

  function showTraffic(traffic, at) {
    const totals = {};
    for (const t of traffic) totals[t.class + "/" + t.action] = t;
    const seconds = previous ? (at - previous.at) / 1000 : 0;
    const rows = traffic
      .map((t) => {
        const key = t.class + "/" + t.action;
        const before = previous && previous.totals[key] ? previous.totals[key].requests : null;
        const rate = seconds > 0 && before !== null ? Math.max(0, t.requests - before) / seconds : null;
        return { t, rate };
      })
      .filter((r) => r.t.requests > 0)
      .sort((a, b) => (b.rate || 0) - (a.rate || 0) || b.t.requests - a.t.requests);
    const top = Math.max(1e-9, ...rows.map((r) => r.rate || 0));
    const table = fill("traffic", head(["class", "action", "req/s", "", "total"], [0, 0, 1, 0, 1]));
    if (!rows.length) table.append(row(["no requests yet", "", "", "", ""]));
    for (const { t, rate } of rows) {
      // The bar's length is a class (w0 to w8, in ems), not a style: the CSP allows no inline style.
      const bar = el("span", "bar w" + (rate ? Math.round((rate / top) * 8) : 0));
      table.append(row([t.class, t.action, rate === null ? "…" : rate.toFixed(1), bar, String(t.requests)],
        [0, 0, 1, 0, 1]));
    }
    previous = { at, totals };
  }

  function showRobots(robots, since) {
    fill("robots-since", "Over the last hour" + (since ? " (counting since " + since + ")." : "."));
    const numeric = [0, 0, 0, 1, 1, 1, 1];
    const table = fill("robots", head(["agent", "category", "identity", "requests", "refusals", "would refuse", "robots.txt fetches"], numeric));
    if (!robots.length) table.append(row(["no robots in the last hour", "", "", "", "", "", ""]));
    for (const r of robots) {
      const identity = Object.entries(r.identity).map(([k, v]) => k + " " + v).join(", ") || "—";
      table.append(row([r.agent, r.category || "—", identity, String(r.requests), String(r.refusals),
        String(r.would_refuse), String(r.robots_txt_fetches)], numeric));
    }
  }

  function showRefusals(refusals) {
    const table = fill("refusals", head(["time", "client", "agent / User-Agent", "path", "reason", "robots.txt line"]));
    if (!refusals.length) table.append(row(["no refusals yet", "", "", "", "", ""]));
    for (const e of refusals) {
      const who = el("td", "ua", el("b", null, e.agent || e.robot || e.class), el("br"), e.user_agent || "(no User-Agent)");
      const line = e.robots_line ? e.robots_line + ": " + (e.robots_text || "") : "—";
      table.append(el("tr", null,
        el("td", null, e.time), el("td", null, e.client || "—"), who,
        el("td", "path", e.path), el("td", null, e.reason + " (" + e.action + ")"), el("td", null, line)));
    }
  }

  function finding(f) {
    return el("div", "finding", "⚠ " + f.message + " ", el("span", "muted", "Fix: " + f.fix));
  }

  function showRobotsTxt(r) {
    const count = r.lines.reduce((n, l) => n + (l.findings ? l.findings.length : 0), r.findings.length);
    fill("robots-meta", "Served with status " + r.status + ", version " + r.version + "; " +
      (count ? count + " lint finding" + (count === 1 ? "" : "s") : "no lint findings") +
      (r.truncated ? "; only the first " + r.lines.length + " lines are shown" : "") + ".");
    fill("robots-findings", ...r.findings.map(finding));
    const pre = fill("robots-txt");
    for (const l of r.lines) {
      pre.append(el("div", "line", el("span", "ln", String(l.n)), l.text));
      for (const f of l.findings || []) pre.append(finding(f));
    }
  }

  async function refresh() {
    try {
      // Against the origin, not the page's URL: a page opened as http://user:token@host/ may
      // not fetch a URL with credentials in it (the browser resends them on its own).
      const response = await fetch(new URL("/status.json", location.origin), { cache: "no-store", credentials: "same-origin" });
      if (!response.ok) throw new Error("/status.json answered " + response.status);
      const s = await response.json();
      showPolicy(s.policy);
      showSummary(s.refusal_counts);
      showCharts(s.history);
      showClients(s.clients);
      showTraffic(s.traffic, Date.now());
      showRobots(s.top_robots, s.robots_since);
      showRefusals(s.refusals);
      showRobotsTxt(s.robots_txt);
      fill("error");
      fill("updated", "Updated " + s.now + ", every " + EVERY_MS / 1000 + " s.");
    } catch (e) {
      fill("error", "Cannot update: " + e.message);
    }
    setTimeout(refresh, EVERY_MS);
  }
  refresh();
})();

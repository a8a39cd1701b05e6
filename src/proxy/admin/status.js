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
    const card = (n, label) => el("div", "card", el("b", null, String(n)), label);
    fill("clients",
      card(c.tarpits_held, "tarpits held"),
      card(c.caught, "caught clients"),
      card(c.paced_now, "paced clients now"),
      card(c.paced_requests, "paced requests"),
      card(c.paced_robots, "clients turned robot for rapid fire"));
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
      const bar = el("span", "bar");
      bar.style.width = rate ? Math.round((rate / top) * 8) + "em" : "0";
      table.append(row([t.class, t.action, rate === null ? "…" : rate.toFixed(1), bar, String(t.requests)],
        [0, 0, 1, 0, 1]));
    }
    previous = { at, totals };
  }

  function showRobots(robots, since) {
    fill("robots-since", "Over the last hour" + (since ? " (counting since " + since + ")." : "."));
    const numeric = [0, 0, 0, 1, 1, 1];
    const table = fill("robots", head(["agent", "category", "identity", "requests", "refusals", "robots.txt fetches"], numeric));
    if (!robots.length) table.append(row(["no robots in the last hour", "", "", "", "", ""]));
    for (const r of robots) {
      const identity = Object.entries(r.identity).map(([k, v]) => k + " " + v).join(", ") || "—";
      table.append(row([r.agent, r.category || "—", identity, String(r.requests), String(r.refusals), String(r.robots_txt_fetches)], numeric));
    }
  }

  function showRefusals(refusals) {
    const table = fill("refusals", head(["time", "client", "agent / User-Agent", "path", "reason", "robots.txt line"]));
    if (!refusals.length) table.append(row(["no refusals yet", "", "", "", "", ""]));
    for (const e of refusals) {
      const who = el("td", "ua", el("b", null, e.agent || e.class), el("br"), e.user_agent || "(no User-Agent)");
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

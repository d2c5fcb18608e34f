"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const views = { overview, countries, experiments, adaptive, abuse, lookup, webhooks };
  let session = null;
  let refreshTimer = null;
  let generation = 0;
  let overviewWindow = "1h";
  let countriesWindow = "24h";
  let abuseWindow = "24h";

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, String(value));
    }
    for (const child of children.flat()) if (child) node.append(child);
    return node;
  }

  function status(text, isError) {
    const line = document.getElementById("status");
    line.textContent = text || "";
    line.className = isError ? "error" : "muted";
  }

  class APIError extends Error {
    constructor(httpStatus, body) {
      super((body && body.error && body.error.message) || ("HTTP " + httpStatus));
      this.httpStatus = httpStatus;
      this.code = body && body.error && body.error.code;
    }
  }

  async function api(method, path, body) {
    const headers = { "Accept": "application/json" };
    if (method !== "GET" && session) headers["X-CSRF-Token"] = session.csrf_token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method, headers, credentials: "same-origin", cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const json = text ? JSON.parse(text) : {};
    if (!response.ok) {
      if (response.status === 401 && path !== "/console/session") showSignIn("The session has ended.");
      throw new APIError(response.status, json);
    }
    return json;
  }

  function percent(value) {
    return value === null || value === undefined ? "–" : (value * 100).toFixed(1) + "%";
  }

  // The p-value as `gateway experiments report` prints it: %.2e below 0.0001, else %.4f.
  function formatP(p) {
    if (p === null || p === undefined) return "–";
    if (p >= 0.0001) return p.toFixed(4);
    const [mantissa, exponent] = p.toExponential(2).split("e");
    const sign = exponent.startsWith("-") ? "-" : "+";
    const digits = exponent.replace(/^[-+]/, "").padStart(2, "0");
    return mantissa + "e" + sign + digits;
  }

  // Numbers are shown with their middle hidden: +4474•••••23.
  function maskNumber(text) {
    return String(text).replace(/\+\d{6,15}/g, (number) =>
      number.slice(0, 5) + "•".repeat(Math.max(0, number.length - 7)) + number.slice(-2));
  }

  function when(iso) {
    if (!iso) return "–";
    const date = new Date(iso);
    return isNaN(date) ? iso : date.toLocaleString();
  }

  function table(headers, rows, attrs) {
    return el("table", attrs || {},
      headers ? el("thead", {}, el("tr", {}, headers.map((h) => el("th", { text: h })))) : null,
      el("tbody", {}, rows));
  }

  function sparkline(series, width, height) {
    const w = width || 120, h = height || 28;
    const all = [].concat(series.starts || [], series.errors || []);
    const max = Math.max(1, ...all);
    const line = (values) => values.map((v, i) =>
      (values.length === 1 ? 0 : (i * w) / (values.length - 1)).toFixed(1) + "," +
      (h - 2 - (v / max) * (h - 4)).toFixed(1)).join(" ");
    return svg("svg", { class: "spark", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img",
                        "aria-label": "starts and errors over the window" },
      svg("polyline", { class: "starts", points: line(series.starts || []) }),
      svg("polyline", { class: "errors", points: line(series.errors || []) }));
  }

  // ---- views ----
  async function overview(view) {
    const [stats, providers] = await Promise.all([
      api("GET", "/v1/admin/stats?window=" + overviewWindow),
      api("GET", "/v1/admin/providers"),
    ]);
    const breakers = {};
    for (const provider of providers.providers) breakers[provider.id] = provider.breakers || [];
    let totalStarts = 0, totalApprovals = 0, failing = 0;
    const rows = stats.providers.map((vendor) => {
      const open = (breakers[vendor.id] || []).filter((b) => b.state !== "closed");
      const attempts = vendor.starts + vendor.error_count;
      const errorShare = attempts > 0 ? vendor.error_count / attempts : 0;
      const isFailing = open.length > 0 || (vendor.error_count >= 5 && errorShare >= 0.2);
      if (isFailing) failing += 1;
      totalStarts += vendor.starts;
      totalApprovals += vendor.approvals;
      const errors = Object.entries(vendor.errors).sort((a, b) => b[1] - a[1])
        .map(([code, n]) => code + " " + n).join(", ");
      const breakerCell = open.length === 0
        ? el("span", { class: "badge closed", text: "closed" })
        : open.map((b) => el("span", { class: "badge " + b.state, text: b.country + " " + b.state }));
      return el("tr", { class: isFailing ? "failing" : null, "data-vendor": vendor.id,
                        "data-state": isFailing ? "failing" : "ok" },
        el("td", {}, el("strong", { text: vendor.id }), " ",
          el("span", { class: "badge " + (isFailing ? "failing" : "ok"), text: isFailing ? "failing" : "ok" })),
        el("td", { class: "num", text: vendor.starts }),
        el("td", { class: "num", text: vendor.approvals }),
        el("td", { class: "num", text: percent(vendor.conversion) }),
        el("td", { class: "num", text: vendor.error_count }),
        el("td", { text: errors || "–" }),
        el("td", { class: "num delivery", text: deliveryText(vendor.delivery),
                   title: deliveryTitle(vendor.delivery) }),
        el("td", { class: "num latency", text: vendor.latency_ms
          ? vendor.latency_ms.p50 + " / " + vendor.latency_ms.p95 + " ms" : "–" }),
        el("td", {}, breakerCell),
        el("td", {}, sparkline(vendor.series)));
    });
    view.replaceChildren(
      el("h2", { text: "Overview" }),
      el("div", { class: "toolbar" },
        el("span", { class: "muted", text: "Window:" }),
        ["1h", "24h"].map((w) => el("button", { type: "button", class: w === overviewWindow ? "primary" : null,
          "data-window": w, text: w, onclick: () => { overviewWindow = w; show("overview"); } })),
        el("span", { class: "muted", text: "refreshes every 10 s · " + when(stats.until) })),
      el("div", { class: "cards" },
        el("div", { class: "card" }, el("div", { class: "muted", text: "Starts" }),
          el("div", { class: "big", text: totalStarts })),
        el("div", { class: "card" }, el("div", { class: "muted", text: "Approved" }),
          el("div", { class: "big", text: totalApprovals })),
        el("div", { class: "card" }, el("div", { class: "muted", text: "Conversion" }),
          el("div", { class: "big", text: percent(totalStarts ? totalApprovals / totalStarts : null) })),
        el("div", { class: "card" }, el("div", { class: "muted", text: "Failing vendors" }),
          el("div", { class: "big" + (failing ? " error" : ""), text: failing }))),
      table(["Vendor", "Starts", "Approved", "Conversion", "Errors", "Error classes", "Delivered · p50 / p95",
             "Latency p50 / p95",
             "Breakers",
             "Starts / errors (" + stats.window + ")"], rows, { id: "vendors" }),
      el("p", { class: "muted", text: "A vendor is flagged when a circuit breaker is not closed in some " +
        "country, or at least 5 errors are a fifth or more of its attempts. Errors are the vendor's failures " +
        "that the gateway failed over, and verifications that failed at the vendor. Delivered: the share of " +
        "the gateway's own-code messages the vendor sent that its receipts report delivered, and the time " +
        "from send to receipt (at most). Latency is over the vendor calls of the window's verifications. " +
        "Breakers are this instance's." }));
  }

  // A vendor's or a cell's own-code delivery: "97% · 4 s / 20 s", or "–" for a Verify vendor.
  function seconds(ms) {
    return ms === null || ms === undefined ? "–" : ms < 1000 ? ms + " ms" : (ms / 1000) + " s";
  }

  function deliveryText(delivery) {
    if (!delivery) return "–";
    return percent(delivery.rate) + " · " + seconds(delivery.p50_ms) + " / " + seconds(delivery.p95_ms);
  }

  function deliveryTitle(delivery) {
    if (!delivery) return null;
    return delivery.delivered + " delivered, " + delivery.undelivered + " undelivered, " + delivery.failed +
      " failed of " + delivery.sends + " sent";
  }

  // Conversion as a heat class, heat-0 (under 10%) to heat-9 (90% or more): colours live in the style
  // sheet, since the page's CSP allows no inline style.
  function heat(conversion) {
    return "heat-" + Math.max(0, Math.min(9, Math.floor(conversion * 10)));
  }

  function money(value) {
    return value === null || value === undefined ? "–" : value.toFixed(3);
  }

  async function countries(view) {
    const report = await api("GET", "/v1/admin/stats/countries?window=" + countriesWindow);
    const vendors = [], byCountry = new Map();
    for (const cell of report.cells) {
      if (!vendors.includes(cell.provider)) vendors.push(cell.provider);
      const country = cell.country || "unknown";
      if (!byCountry.has(country)) byCountry.set(country, { starts: 0, cells: {} });
      byCountry.get(country).starts += cell.starts;
      byCountry.get(country).cells[cell.provider] = cell;
    }
    const order = [...byCountry.keys()].sort((a, b) =>
      (a === "unknown") - (b === "unknown") || byCountry.get(b).starts - byCountry.get(a).starts ||
      a.localeCompare(b));
    const rows = order.map((country) => el("tr", { "data-country": country },
      el("th", { text: country }),
      el("td", { class: "num", text: byCountry.get(country).starts }),
      vendors.map((vendor) => {
        const cell = byCountry.get(country).cells[vendor];
        if (!cell || cell.starts === 0) return el("td", { class: "heat-none", text: "–" });
        return el("td", { class: "heat " + heat(cell.conversion), "data-vendor": vendor,
                          "data-conversion": cell.conversion,
                          title: cell.approvals + " of " + cell.starts + " approved" },
          el("div", { class: "rate", text: percent(cell.conversion) }),
          el("div", { class: "sub", text: "n " + cell.starts + " · " + money(cell.cost_per_approval) + " / ok" }),
          cell.delivery ? el("div", { class: "sub delivery", title: deliveryTitle(cell.delivery),
            text: "delivered " + percent(cell.delivery.rate) + " · p50 " + seconds(cell.delivery.p50_ms) }) : null);
      })));
    view.replaceChildren(
      el("h2", { text: "Countries" }),
      el("div", { class: "toolbar" },
        el("span", { class: "muted", text: "Window:" }),
        ["1h", "24h"].map((w) => el("button", { type: "button", class: w === countriesWindow ? "primary" : null,
          "data-window": w, text: w, onclick: () => { countriesWindow = w; show("countries"); } })),
        el("span", { class: "muted", text: when(report.until) })),
      report.cells.length === 0 ? el("p", { class: "muted", text: "No verification in the window." })
        : table(["Country", "Starts"].concat(vendors.map((v) => v === "-" ? "none (blocked)" : v)), rows,
                { id: "countries", class: "heatmap" }),
      el("div", { class: "legend" }, el("span", { class: "muted", text: "Conversion " }),
        [0, 2, 4, 6, 8, 9].map((n) => el("span", { class: "heat heat-" + n, text: (n * 10) + "%" }))),
      el("p", { class: "muted", text: "Each cell: conversion, starts and cost per approval (the routing " +
        "configuration's prices for every start that did not fail, over the approvals); for a vendor that " +
        "sends the gateway's own codes, the share of its messages delivered and the median time to the " +
        "delivered receipt. \"unknown\" " +
        "counts verifications stored before the gateway kept their country; \"none (blocked)\" the starts " +
        "the SMS-pumping guard refused as it set a block." }));
  }

  async function experiments(view) {
    const list = await api("GET", "/v1/admin/experiments");
    const selected = decodeURIComponent((location.hash.split("/")[1] || ""));
    const names = list.experiments.map((e) => e.name);
    const links = list.experiments.length === 0
      ? el("p", { class: "muted", text: "No experiment is configured." })
      : el("ul", {}, list.experiments.map((e) => el("li", {},
          el("a", { href: "#experiments/" + encodeURIComponent(e.name), "data-experiment": e.name, text: e.name }),
          " ", el("span", { class: "muted", text: e.arms.map((a) => a.name + " " + a.weight).join(" / ") }))));
    view.replaceChildren(el("h2", { text: "Experiments" }), links);
    if (!selected || !names.includes(selected)) return;
    const report = await api("GET", "/v1/admin/experiments/" + encodeURIComponent(selected));
    const control = report.arms.find((a) => a.control);
    const lows = report.arms.filter((a) => a.conversion_95).map((a) => a.conversion_95[0]);
    const highs = report.arms.filter((a) => a.conversion_95).map((a) => a.conversion_95[1]);
    const lo = lows.length ? Math.max(0, Math.floor((Math.min(...lows) - 0.02) * 20) / 20) : 0;
    const hi = highs.length ? Math.min(1, Math.ceil((Math.max(...highs) + 0.02) * 20) / 20) : 1;
    const bar = (arm) => {
      const w = 260, h = 22, x = (v) => ((v - lo) / (hi - lo || 1)) * w;
      const parts = [svg("rect", { class: "track", x: 0, y: 6, width: w, height: 10 })];
      if (arm.conversion_95) {
        parts.push(svg("rect", { class: "range" + (arm.control ? " control" : ""), x: x(arm.conversion_95[0]),
          y: 6, width: Math.max(1, x(arm.conversion_95[1]) - x(arm.conversion_95[0])), height: 10 }));
      }
      if (arm.conversion !== null) parts.push(svg("rect", { class: "point", x: x(arm.conversion) - 1, y: 3,
        width: 2, height: 16 }));
      return svg("svg", { class: "interval", width: w, height: h, role: "img",
        "aria-label": "Wilson 95% interval " + (arm.conversion_95 || []).map(percent).join(" to ") }, parts);
    };
    const rows = report.arms.map((arm) => el("tr", { "data-arm": arm.name },
      el("td", {}, el("strong", { text: arm.name }), arm.control ? el("span", { class: "muted", text: " control" }) : null),
      el("td", { text: arm.provider }),
      el("td", { class: "num", text: arm.weight }),
      el("td", { class: "num", text: arm.starts }),
      el("td", { class: "num", text: arm.approvals }),
      el("td", { class: "num", text: percent(arm.conversion) }),
      el("td", {}, bar(arm), " ", el("span", { class: "muted",
        text: arm.conversion_95 ? percent(arm.conversion_95[0]) + "–" + percent(arm.conversion_95[1]) : "–" })),
      el("td", { class: "num p-value", "data-p-value": arm.p_value === null ? "" : arm.p_value,
        text: arm.control ? "–" : formatP(arm.p_value) }),
      el("td", { class: "num", text: arm.cost_per_approval === null ? "–" : arm.cost_per_approval.toFixed(3) })));
    const verdicts = report.arms.filter((a) => !a.control).map((arm) => {
      let text;
      if (arm.p_value === null || !control) text = arm.name + ": not enough data yet";
      else if (arm.p_value < 0.05) {
        const better = arm.conversion > control.conversion ? arm.name : control.name;
        text = better + " better, p = " + formatP(arm.p_value);
      } else {
        const more = arm.sample_still_needed;
        text = arm.name + " vs " + control.name + ": not yet significant, p = " + formatP(arm.p_value) +
          (more ? ", n needed ≈ " + more + " more per arm" : "");
      }
      return el("p", { class: "verdict", "data-arm": arm.name, text });
    });
    view.append(
      el("h3", { text: report.experiment }),
      el("div", { id: "verdict" }, verdicts),
      table(["Arm", "Provider", "Weight", "Starts", "Approved", "Conversion",
             "Wilson 95% (" + percent(lo) + "–" + percent(hi) + ")", "p-value", "Cost / approval"], rows,
            { id: "arms" }),
      el("p", { class: "muted", text: "p-value: two-sided two-proportion z-test against the control. " +
        "n needed: users per arm to detect a " + (report.minimum_effect * 100).toFixed(1) +
        " point difference (alpha 0.05, power 0.8); decide it before reading p-values." }));
  }

  // A posterior's mean and central 95% interval on a 0–100% scale.
  function posteriorBar(p) {
    const w = 220, h = 22, x = (v) => v * w;
    const [low, high] = p.interval_95;
    return svg("svg", { class: "interval", width: w, height: h, role: "img",
                        "aria-label": "posterior 95% interval " + percent(low) + " to " + percent(high) },
      svg("rect", { class: "track", x: 0, y: 6, width: w, height: 10 }),
      svg("rect", { class: "range", x: x(low), y: 6, width: Math.max(1, x(high) - x(low)), height: 10 }),
      svg("rect", { class: "point", x: x(p.posterior_mean) - 1, y: 3, width: 2, height: 16 }));
  }

  // Each bucket's starts as a column of shares, one colour per provider (in the route's order).
  function shareHistory(providers, history) {
    const w = 480, h = 80, gap = 2;
    const column = history.length ? Math.max(2, Math.floor(w / history.length) - gap) : 0;
    const parts = [];
    history.forEach((bucket, i) => {
      const total = providers.reduce((sum, p) => sum + (bucket.starts[p] || 0), 0);
      let y = h;
      providers.forEach((provider, index) => {
        const n = bucket.starts[provider] || 0;
        if (!total || !n) return;
        const height = (n / total) * h;
        y -= height;
        parts.push(svg("rect", { class: "share p" + (index % 6), x: i * (column + gap), y: y.toFixed(1),
          width: column, height: height.toFixed(1) },
          svg("title", { text: provider + " " + n + " of " + total + " · " + when(bucket.bucket_start) })));
      });
    });
    return svg("svg", { class: "history", width: w, height: h, role: "img",
                        "aria-label": "each provider's share of starts per bucket" }, parts);
  }
  async function adaptive(view) {
    const { routes } = await api("GET", "/v1/routing/adaptive");
    view.replaceChildren(el("h2", { text: "Adaptive routing" }));
    if (routes.length === 0) {
      view.append(el("p", { class: "muted", id: "no-adaptive", text: "No adaptive route is configured." }));
      return;
    }
    for (const route of routes) {
      view.append(el("h3", { text: route.route }),
        el("p", { class: "muted", text: "objective " + route.objective + " · per " +
          (route.per.join(", ") || "nothing") + " · min share " + percent(route.min_share) +
          " · half-life " + Math.round(route.window_seconds / 60) + " min · buckets of " +
          Math.round(route.bucket_seconds / 60) + " min" }));
      if (route.contexts.length === 0) {
        view.append(el("p", { class: "muted", text: "No evidence yet." }));
        continue;
      }
      for (const context of route.contexts) {
        const rows = context.providers.map((p) => el("tr", { "data-provider": p.provider },
          el("td", {}, el("span", { class: "swatch p" + (route.providers.indexOf(p.provider) % 6) }),
            " ", el("strong", { text: p.provider })),
          el("td", { class: "num share", text: percent(p.share) }),
          el("td", { class: "num", text: p.starts }),
          el("td", { class: "num", text: p.approvals }),
          el("td", { class: "num", text: p.failures }),
          el("td", { class: "num", text: p.pending }),
          el("td", {}, posteriorBar(p), " ", el("span", { class: "muted posterior",
            text: percent(p.posterior_mean) + " (" + percent(p.interval_95[0]) + "–" +
              percent(p.interval_95[1]) + ")" })),
          el("td", { class: "num", text: money(p.cost_per_approval) })));
        view.append(el("div", { class: "context", "data-route": route.route, "data-context": context.context },
          el("h4", { text: "Context " + context.context }),
          table(["Provider", "Share", "Starts", "Approved", "Failed", "Pending",
                 "Posterior approval rate, 95% (0–100%)", "Cost / approval"], rows),
          el("div", { class: "muted", text: "Shares of starts per bucket, oldest first:" }),
          context.history.length === 0 ? el("p", { class: "muted", text: "No start in the horizon." })
            : shareHistory(route.providers, context.history)));
      }
    }
    view.append(el("p", { class: "muted", text: "Share: each provider's chance of the next start (its " +
      "chance of the highest Thompson draw, raised to the minimum share). The posterior is the Beta " +
      "belief in its approval rate from decayed evidence. The columns are the starts each provider was " +
      "given per bucket, from the store. docs/routing.md §3a." }));
  }

  async function abuse(view) {
    const [{ blocks }, refusals] = await Promise.all([
      api("GET", "/v1/admin/blocks"),
      api("GET", "/v1/admin/refusals?window=" + abuseWindow),
    ]);
    const isAdmin = session.key.scopes.includes("admin");
    const rows = blocks.map((block) => el("tr", { "data-prefix": block.prefix },
      el("td", {}, el("code", { text: block.prefix })),
      el("td", { class: "num", text: block.starts }),
      el("td", { class: "num", text: block.approvals }),
      el("td", { text: when(block.blocked_at) }),
      el("td", { text: when(block.until) }),
      el("td", {}, el("button", { type: "button", class: "lift", disabled: !isAdmin,
        title: isAdmin ? null : "needs an admin key", text: "Lift",
        onclick: async (event) => {
          event.target.disabled = true;
          try {
            await api("DELETE", "/v1/admin/blocks/" + encodeURIComponent(block.prefix));
            status("Lifted the block on " + block.prefix + ".");
            show("abuse", true);
          } catch (error) { status(error.message, true); event.target.disabled = false; }
        } }))));
    view.replaceChildren(
      el("h2", { text: "Abuse" }),
      el("h3", { text: "Prefix blocks (SMS-pumping guard)" }),
      blocks.length === 0 ? el("p", { class: "muted", id: "no-blocks", text: "No prefix is blocked." })
        : table(["Prefix", "Starts", "Approved", "Blocked at", "Until", ""], rows, { id: "blocks" }),
      el("h3", { text: "Refusals" }),
      el("div", { class: "toolbar" },
        el("span", { class: "muted", text: "Window:" }),
        ["1h", "24h"].map((w) => el("button", { type: "button", class: w === abuseWindow ? "primary" : null,
          "data-window": w, text: w, onclick: () => { abuseWindow = w; show("abuse"); } })),
        el("span", { class: "muted", id: "refusal-total", text: refusals.total + " refused" })),
      refusals.kinds.length === 0
        ? el("p", { class: "muted", id: "no-refusals", text: "Nothing was refused in the window." })
        : table(["Kind", "Refused", "Over the window (" + refusals.window + ")"], refusals.kinds.map((k) =>
            el("tr", { "data-kind": k.kind },
              el("td", {}, el("code", { text: k.kind })),
              el("td", { class: "num", text: k.count }),
              el("td", {}, sparkline({ errors: k.series })))), { id: "refusals" }),
      el("p", { class: "muted", text: "Starts and requests refused for a rate limit (what per which " +
        "limit), a country not allowed (geo) or a blocked prefix (pumping guard), counted by every " +
        "instance in the store." }));
  }

  async function lookup(view) {
    const form = el("form", { id: "lookup-form", autocomplete: "off" },
      el("label", {}, "Verification id or number ",
        el("input", { id: "lookup-id", required: true, placeholder: "vf_… or +44…" })),
      el("button", { type: "submit", class: "primary", text: "Look up" }));
    const result = el("div", { id: "lookup-result" });
    async function byID(id) {
      result.replaceChildren(el("p", { class: "muted", text: "Looking up…" }));
      const v = await api("GET", "/v1/verifications/" + encodeURIComponent(id) + "?include=timeline");
      const facts = [["Status", v.status], ["Reason", v.status_reason], ["To", maskNumber(v.to)],
        ["Channel", v.channel], ["Vendor", v.provider], ["Route", v.route],
        ["Experiment", v.experiment ? v.experiment + " / " + v.experiment_arm : null],
        ["Sends", v.sends], ["Created", when(v.created_at)], ["Expires", when(v.expires_at)]];
      const timeline = v.timeline.map((event) => el("tr", { "data-kind": event.kind },
        el("td", { text: when(event.at) }),
        el("td", {}, el("code", { text: event.kind })),
        el("td", { text: Object.entries(event.detail).map(([k, val]) => k + "=" + maskNumber(val)).join("  ") })));
      result.replaceChildren(
        el("h3", { text: v.id }),
        table(null, facts.map(([k, val]) => el("tr", {}, el("th", { text: k }),
          el("td", { text: val === null || val === undefined ? "–" : String(val) }))), { id: "facts" }),
        el("h3", { text: "Timeline" }),
        table(["At", "Event", "Detail"], timeline, { id: "timeline" }));
    }
    async function byNumber(number) {
      result.replaceChildren(el("p", { class: "muted", text: "Looking up…" }));
      const found = await api("GET", "/v1/admin/verifications?to=" + encodeURIComponent(number));
      const rows = found.verifications.map((v) => el("tr", { "data-id": v.id },
        el("td", {}, el("button", { type: "button", class: "open", text: v.id,
          onclick: () => byID(v.id).catch((error) =>
            result.replaceChildren(el("p", { class: "error", text: error.message }))) })),
        el("td", { text: v.to }),
        el("td", { text: v.country || "–" }),
        el("td", {}, el("span", { class: "badge " + v.status, text: v.status })),
        el("td", { text: v.provider }),
        el("td", { text: v.route || "–" }),
        el("td", { text: when(v.created_at) })));
      result.replaceChildren(
        el("h3", { text: "Verifications to " + found.to }),
        rows.length === 0 ? el("p", { class: "muted", id: "no-verifications", text: "None stored." })
          : table(["Id", "To", "Country", "Status", "Vendor", "Route", "Created"], rows, { id: "by-number" }),
        el("p", { class: "muted", text: "The newest 20, newest first. Press an id for its timeline." }));
    }
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = document.getElementById("lookup-id").value.trim();
      try {
        // An id starts with letters; a number with + or a digit.
        if (/^[+0-9(]/.test(text)) await byNumber(text); else await byID(text);
      } catch (error) {
        result.replaceChildren(el("p", { class: "error", text: error.message }));
      }
    });
    view.replaceChildren(el("h2", { text: "Lookup" }), form, result,
      el("p", { class: "muted", text: "Numbers are shown with their middle hidden; codes are never shown." }));
  }

  async function webhooks(view) {
    const [all, parked, pending, configured] = await Promise.all([
      api("GET", "/v1/admin/webhooks/deliveries?limit=100"),
      api("GET", "/v1/admin/webhooks/deliveries?state=parked&limit=500"),
      api("GET", "/v1/admin/webhooks/deliveries?state=pending&limit=500"),
      api("GET", "/v1/admin/webhooks/endpoints"),
    ]);
    const isAdmin = session.key.scopes.includes("admin");
    const endpointRow = (e) => el("tr", { "data-endpoint": e.name, "data-state": e.state },
      el("td", {}, el("strong", { text: e.name })),
      el("td", {}, el("code", { text: e.url })),
      el("td", { text: e.signing + (e.signing === "standard" ? " · " + e.secrets + " secret" +
        (e.secrets > 1 ? "s" : "") + (e.public_key ? " · Ed25519" : "") : "") }),
      el("td", { text: e.format }),
      el("td", {}, el("span", { class: "badge " + (e.state === "active" ? "ok" : "failing"), text: e.state })),
      el("td", { text: e.state === "disabled" ? e.disabled_reason + " · " + when(e.disabled_at) : "–" }),
      el("td", {}, e.state === "active" ? null : el("button", { type: "button", class: "enable",
        disabled: !isAdmin, title: isAdmin ? null : "needs an admin key", text: "Enable",
        onclick: async (event) => {
          event.target.disabled = true;
          try {
            await api("POST", "/v1/admin/webhooks/endpoints/" + encodeURIComponent(e.name) + "/enable");
            status("Enabled " + e.name + ".");
            show("webhooks", true);
          } catch (error) { status(error.message, true); event.target.disabled = false; }
        } })));
    const row = (d) => el("tr", { "data-delivery": d.id, "data-state": d.state },
      el("td", { text: when(d.created_at) }),
      el("td", {}, el("code", { text: d.type })),
      el("td", {}, el("code", { text: d.verification_id })),
      el("td", { text: d.endpoint }),
      el("td", {}, el("span", { class: "badge " + d.state, text: d.state })),
      el("td", { class: "num", text: d.attempts }),
      el("td", { text: d.last_error || "–" }),
      el("td", { text: d.state === "pending" ? when(d.next_attempt_at) : "–" }),
      el("td", {}, d.state === "pending" ? null : el("button", { type: "button", class: "replay",
        disabled: !isAdmin, title: isAdmin ? null : "needs an admin key", text: "Replay",
        onclick: async (event) => {
          event.target.disabled = true;
          try {
            await api("POST", "/v1/admin/webhooks/deliveries/" + encodeURIComponent(d.id) + "/replay");
            status("Queued " + d.id + " again.");
            show("webhooks", true);
          } catch (error) { status(error.message, true); event.target.disabled = false; }
        } })));
    const headers = ["Created", "Type", "Verification", "Endpoint", "State", "Attempts", "Last error",
                     "Next attempt", ""];
    view.replaceChildren(
      el("h2", { text: "Webhooks" }),
      el("div", { class: "cards" },
        el("div", { class: "card" }, el("div", { class: "muted", text: "Retry queue" }),
          el("div", { class: "big", id: "pending-count", text: pending.deliveries.length })),
        el("div", { class: "card" }, el("div", { class: "muted", text: "Failed (parked)" }),
          el("div", { class: "big" + (parked.deliveries.length ? " error" : ""), id: "parked-count",
            text: parked.deliveries.length }))),
      el("h3", { text: "Endpoints" }),
      configured.endpoints.length === 0 ? el("p", { class: "muted", text: "No endpoint is configured." })
        : table(["Endpoint", "URL", "Signing", "Format", "State", "Disabled", ""],
                configured.endpoints.map(endpointRow), { id: "endpoints" }),
      el("p", { class: "muted", text: "An endpoint whose receiver answers 410 Gone is disabled for every " +
        "instance: nothing is queued for it until it is enabled again; replay what was parked meanwhile." }),
      el("h3", { text: "Failed deliveries" }),
      parked.deliveries.length === 0 ? el("p", { class: "muted", text: "No delivery is parked." })
        : table(headers, parked.deliveries.map(row), { id: "parked" }),
      el("h3", { text: "Latest deliveries" }),
      all.deliveries.length === 0 ? el("p", { class: "muted", text: "No webhook delivery yet." })
        : table(headers, all.deliveries.map(row), { id: "deliveries" }));
  }

  // ---- navigation and session ----
  async function show(name, quiet) {
    clearTimeout(refreshTimer);
    if (!session) return;
    if (!views[name]) name = "overview";
    for (const link of document.querySelectorAll("nav a")) {
      link.classList.toggle("active", link.dataset.view === name);
    }
    const view = document.getElementById("view");
    const mine = ++generation;
    view.hidden = false;
    view.dataset.view = name;
    if (!quiet) status("Loading…");
    // Drawn aside and swapped in only if no other view was asked for meanwhile.
    const drawn = el("div");
    try {
      await views[name](drawn);
      if (mine !== generation || !session) return;
      view.replaceChildren(...drawn.childNodes);
      view.dataset.loaded = name;
      if (!quiet) status("");
    } catch (error) {
      if (mine === generation && session) status(error.message, true);
    }
    if (name === "overview" && mine === generation) {
      refreshTimer = setTimeout(() => show("overview", true), 10000);
    }
  }

  function currentView() {
    return (location.hash.replace(/^#/, "").split("/")[0]) || "overview";
  }

  function showSignIn(message) {
    clearTimeout(refreshTimer);
    session = null;
    document.getElementById("nav").hidden = true;
    document.getElementById("who").hidden = true;
    document.getElementById("view").hidden = true;
    document.getElementById("view").replaceChildren();
    delete document.getElementById("view").dataset.loaded;
    generation += 1;
    document.getElementById("sign-in").hidden = false;
    document.getElementById("sign-in-error").textContent = message || "";
    status("");
  }

  function signedIn(answer) {
    session = answer;
    document.getElementById("sign-in").hidden = true;
    document.getElementById("nav").hidden = false;
    document.getElementById("who").hidden = false;
    document.getElementById("who-name").textContent =
      answer.key.name + " (" + answer.key.scopes.join(", ") + ")";
    show(currentView());
  }

  document.addEventListener("DOMContentLoaded", async () => {
    document.getElementById("sign-in-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const input = document.getElementById("sign-in-key");
      try {
        const answer = await api("POST", "/console/session", { key: input.value });
        input.value = "";
        signedIn(answer);
      } catch (error) {
        input.value = "";
        document.getElementById("sign-in-error").textContent = error.message;
      }
    });
    document.getElementById("sign-out").addEventListener("click", async () => {
      try { await api("DELETE", "/console/session"); } catch (error) { /* signed out either way */ }
      showSignIn("Signed out.");
    });
    window.addEventListener("hashchange", () => show(currentView()));
    try {
      const current = await api("GET", "/console/session");
      if (current.signed_in) signedIn(current); else showSignIn("");
    } catch (error) {
      showSignIn(error.message);
    }
  });
})();

extension ConsoleAssets {
    /// The Overview, Countries and Experiments views, and the adaptive view's charts.
    static let scriptViews = #"""
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
              table(["Vendor", "Starts", "Approved", "Conversion", "Errors", "Error classes", "Latency p50 / p95",
                     "Breakers",
                     "Starts / errors (" + stats.window + ")"], rows, { id: "vendors" }),
              el("p", { class: "muted", text: "A vendor is flagged when a circuit breaker is not closed in some " +
                "country, or at least 5 errors are a fifth or more of its attempts. Errors are the vendor's failures " +
                "that the gateway failed over, and verifications that failed at the vendor. Latency is over the " +
                "vendor calls of the window's verifications. Breakers are this instance's." }));
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
                  el("div", { class: "sub", text: "n " + cell.starts + " · " + money(cell.cost_per_approval) + " / ok" }));
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
                "configuration's prices for every start that did not fail, over the approvals). \"unknown\" " +
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

        """#
}

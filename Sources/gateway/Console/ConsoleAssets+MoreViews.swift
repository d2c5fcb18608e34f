extension ConsoleAssets {
    /// The Adaptive, Abuse, Lookup and Webhooks views.
    static let scriptMoreViews = #"""
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
            const [all, parked, pending] = await Promise.all([
              api("GET", "/v1/admin/webhooks/deliveries?limit=100"),
              api("GET", "/v1/admin/webhooks/deliveries?state=parked&limit=500"),
              api("GET", "/v1/admin/webhooks/deliveries?state=pending&limit=500"),
            ]);
            const isAdmin = session.key.scopes.includes("admin");
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
              el("h3", { text: "Failed deliveries" }),
              parked.deliveries.length === 0 ? el("p", { class: "muted", text: "No delivery is parked." })
                : table(headers, parked.deliveries.map(row), { id: "parked" }),
              el("h3", { text: "Latest deliveries" }),
              all.deliveries.length === 0 ? el("p", { class: "muted", text: "No webhook delivery yet." })
                : table(headers, all.deliveries.map(row), { id: "deliveries" }));
          }

          // ---- navigation and session ----

        """#
}

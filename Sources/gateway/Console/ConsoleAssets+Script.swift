extension ConsoleAssets {
    /// The console's script: signs in and out, then draws each view from the admin API with the session
    /// cookie; state-changing calls send the session's CSRF token. Text goes into the page as text nodes,
    /// never as markup; charts are SVG elements made here.
    /// Served as one file, kept in four parts (here, `ConsoleAssets+Views.swift` and
    /// `ConsoleAssets+MoreViews.swift`) to keep each source file short.
    static let script = scriptSupport + scriptViews + scriptMoreViews + scriptSession

    /// The shared state and the helpers that build the page: elements, SVG, the API call, formats.
    static let scriptSupport = #"""
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

        """#

    /// Navigation between views, signing in and out, and the start.
    static let scriptSession = #"""
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

        """#
}

extension ConsoleAssets {
    /// The console's style sheet: system fonts, a table layout, and the colours of states and heat.
    static let style = #"""
        :root { --fg: #1f2937; --muted: #6b7280; --line: #e5e7eb; --bad: #b91c1c; --warn: #b45309; --good: #15803d;
          --accent: #1d4ed8; --bg: #f9fafb; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
          background: var(--bg); }
        header { display: flex; gap: 24px; align-items: center; padding: 10px 20px; background: #fff;
          border-bottom: 1px solid var(--line); }
        header h1 { font-size: 16px; margin: 0; }
        nav a { margin-right: 14px; color: var(--muted); text-decoration: none; padding: 4px 0; }
        nav a.active { color: var(--accent); border-bottom: 2px solid var(--accent); }
        #who { margin-left: auto; color: var(--muted); }
        main { padding: 16px 20px; max-width: 1200px; }
        h2 { font-size: 18px; margin: 8px 0 12px; }
        h3 { font-size: 15px; margin: 18px 0 8px; }
        table { border-collapse: collapse; background: #fff; width: 100%; margin-bottom: 12px; }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
        th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        tr.failing td:first-child { border-left: 4px solid var(--bad); }
        .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
        .badge.failing, .badge.open { background: #fee2e2; color: var(--bad); }
        .badge.half_open, .badge.degraded { background: #fef3c7; color: var(--warn); }
        .badge.ok, .badge.closed { background: #dcfce7; color: var(--good); }
        .badge.parked { background: #fee2e2; color: var(--bad); }
        .badge.pending { background: #fef3c7; color: var(--warn); }
        .badge.delivered { background: #dcfce7; color: var(--good); }
        .muted { color: var(--muted); }
        .error { color: var(--bad); }
        .verdict { font-size: 15px; font-weight: 600; margin: 8px 0; }
        .toolbar { display: flex; gap: 8px; align-items: center; margin-bottom: 10px; }
        button { font: inherit; padding: 4px 12px; border: 1px solid var(--line); border-radius: 6px; background: #fff;
          cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button:disabled { opacity: .5; cursor: default; }
        input { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; min-width: 320px; }
        form label { display: inline-flex; gap: 8px; align-items: center; margin-right: 8px; }
        svg.spark { vertical-align: middle; }
        svg.spark .starts { stroke: var(--accent); fill: none; stroke-width: 1.5; }
        svg.spark .errors { stroke: var(--bad); fill: none; stroke-width: 1.5; }
        svg.interval .track { fill: #f3f4f6; }
        svg.interval .range { fill: #93c5fd; }
        svg.interval .range.control { fill: #d1d5db; }
        svg.interval .point { fill: var(--accent); }
        svg.interval text { font-size: 10px; fill: var(--muted); }
        .cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 12px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 150px; }
        .card .big { font-size: 22px; font-weight: 600; }
        code { font-size: 12px; }
        table.heatmap td { text-align: center; min-width: 110px; }
        td.heat .rate, .legend .heat { font-weight: 600; }
        td.heat .sub { font-size: 11px; opacity: .8; }
        .heat-none { color: var(--muted); }
        .legend { display: flex; gap: 2px; align-items: center; margin-bottom: 10px; }
        .legend .heat { padding: 2px 8px; font-size: 12px; }
        .heat-0 { background: #b91c1c; color: #fff; } .heat-1 { background: #dc2626; color: #fff; }
        .heat-2 { background: #ef4444; color: #fff; } .heat-3 { background: #f97316; color: #fff; }
        .heat-4 { background: #fb923c; } .heat-5 { background: #fbbf24; } .heat-6 { background: #facc15; }
        .heat-7 { background: #a3e635; } .heat-8 { background: #4ade80; } .heat-9 { background: #16a34a; color: #fff; }
        h4 { font-size: 14px; margin: 14px 0 6px; }
        .context { margin-bottom: 18px; }
        svg.history { background: #fff; border: 1px solid var(--line); margin: 4px 0 8px; }
        .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
        .p0 { fill: #1d4ed8; background: #1d4ed8; } .p1 { fill: #f59e0b; background: #f59e0b; }
        .p2 { fill: #10b981; background: #10b981; } .p3 { fill: #ef4444; background: #ef4444; }
        .p4 { fill: #8b5cf6; background: #8b5cf6; } .p5 { fill: #6b7280; background: #6b7280; }
        button.open { font-family: ui-monospace, monospace; font-size: 12px; padding: 2px 8px; }
        .badge.approved { background: #dcfce7; color: var(--good); }
        .badge.failed, .badge.denied { background: #fee2e2; color: var(--bad); }
        """#
}

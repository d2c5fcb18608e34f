/// The operator console's files, compiled into the binary: no Node toolchain, no files to ship beside it.
/// The page is static; the script fills it from the admin API (``ConsoleController``).
enum ConsoleAssets {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>Verification gateway console</title>
        <link rel="icon" href="/console/icon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/console/console.css">
        <script src="/console/console.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Verification gateway</h1>
          <nav id="nav" hidden>
            <a href="#overview" data-view="overview">Overview</a>
            <a href="#countries" data-view="countries">Countries</a>
            <a href="#experiments" data-view="experiments">Experiments</a>
            <a href="#adaptive" data-view="adaptive">Adaptive</a>
            <a href="#abuse" data-view="abuse">Abuse</a>
            <a href="#lookup" data-view="lookup">Lookup</a>
            <a href="#webhooks" data-view="webhooks">Webhooks</a>
          </nav>
          <div id="who" hidden><span id="who-name"></span> <button id="sign-out" type="button">Sign out</button></div>
        </header>
        <main>
          <section id="sign-in" hidden>
            <h2>Sign in</h2>
            <p>With an API key that has the <code>admin</code> or <code>read</code> scope. The key is sent once;
            the console then holds a session cookie for eight hours.</p>
            <form id="sign-in-form" autocomplete="off">
              <label>API key <input id="sign-in-key" type="password" required autocomplete="off"></label>
              <button type="submit">Sign in</button>
            </form>
            <p id="sign-in-error" class="error" role="alert"></p>
          </section>
          <section id="view" hidden aria-live="polite"></section>
          <p id="status" class="muted"></p>
        </main>
        </body>
        </html>

        """#

    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/>\#
        <path d="M4 8.5l2.5 2.5L12 5" stroke="#fff" stroke-width="2" fill="none"/></svg>

        """#
}

/// The operator console's files (`Console/Assets/`), embedded in the binary as the OpenAPI document is: no
/// Node toolchain, no files to ship beside it. The page is static; `console.js` fills it from the admin API
/// (``ConsoleController``): it signs in and out, then draws each view with the session cookie, sending the
/// session's CSRF token on state-changing calls; text goes into the page as text nodes, never as markup, and
/// charts are SVG elements the script makes. `.ci/run` checks the script's syntax with `node --check`.
enum ConsoleAssets {
    static var html: [UInt8] { PackageResources.index_html }
    static var script: [UInt8] { PackageResources.console_js }
    static var style: [UInt8] { PackageResources.console_css }
    static var icon: [UInt8] { PackageResources.icon_svg }
}

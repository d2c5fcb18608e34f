/// What makes a phone fill the code in by itself.
///
/// - `originBoundHost`: the message ends with the origin-bound line of the WICG "Origin-bound one-time codes
///   delivered via SMS" format, `@example.com #123456`, which Safari, iOS and Chrome read for the site of that
///   host.
/// - `androidAppHash`: the 11 characters Android's SMS Retriever API matches a message to an app by, on a line of
///   their own (before the origin-bound line when both are set). SMS Retriever reads messages of at most 140
///   bytes: one segment.
public struct MessageAutofill: Sendable, Hashable {
    /// The host of the site the code is for (`example.com`), lower case, no scheme, port or path.
    public var originBoundHost: String?
    /// The app's SMS Retriever hash: 11 characters of `A-Z a-z 0-9 + /`.
    public var androidAppHash: String?

    /// Autofill for the host and app hash given, or every problem with them.
    public init(originBoundHost: String? = nil, androidAppHash: String? = nil) throws(MessageTemplateError) {
        var problems: [String] = []
        if let host = originBoundHost, let problem = Self.hostProblem(host) { problems.append(problem) }
        if let hash = androidAppHash, let problem = Self.appHashProblem(hash) { problems.append(problem) }
        guard problems.isEmpty else { throw MessageTemplateError(problems: problems) }
        self.originBoundHost = originBoundHost
        self.androidAppHash = androidAppHash
    }

    /// No autofill.
    public static let none = MessageAutofill(unchecked: nil, nil)

    private init(unchecked host: String?, _ hash: String?) {
        self.originBoundHost = host
        self.androidAppHash = hash
    }

    /// `body` with the autofill lines after a blank line: the app hash, then the origin-bound line last.
    public func apply(to body: String, code: String) -> String {
        var lines: [String] = []
        if let hash = androidAppHash { lines.append(hash) }
        if let host = originBoundHost { lines.append("@\(host) #\(code)") }
        guard !lines.isEmpty else { return body }
        return body + "\n\n" + lines.joined(separator: "\n")
    }

    /// Why `host` is not a domain the origin-bound format can name, or `nil`: two or more dot-separated labels of
    /// lower-case letters, digits and inner hyphens, each at most 63 characters, 253 in all.
    static func hostProblem(_ host: String) -> String? {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
        let wellFormed =
            host.count <= 253 && labels.count >= 2
            && labels.allSatisfy { label in
                !label.isEmpty && label.count <= 63 && label.allSatisfy(allowed.contains) && label.first != "-"
                    && label.last != "-"
            }
            && labels.last?.allSatisfy(\.isNumber) == false
        return wellFormed
            ? nil
            : "origin_bound host `\(host)` is not a lower-case domain name such as `example.com` "
                + "(no scheme, port, path or trailing dot)"
    }

    /// Why `hash` is not an SMS Retriever app hash, or `nil`.
    static func appHashProblem(_ hash: String) -> String? {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return hash.count == 11 && hash.allSatisfy(alphabet.contains)
            ? nil : "android_app_hash `\(hash)` is not 11 characters of A-Z, a-z, 0-9, + and /"
    }
}

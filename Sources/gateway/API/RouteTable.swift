import HTTPTypes
import Hummingbird
import Synchronization

/// Every route pattern the router serves with its methods, recorded as routes are added, so a request
/// that matches a path but not a method answers `405` with `Allow` instead of `404`.
final class RouteTable: Sendable {
    private let routes = Mutex<[(segments: [Substring], methods: Set<HTTPRequest.Method>)]>([])

    /// Records `method` on `path` (`/v1/verifications/{id}`; `{name}` and `:name` match any one segment).
    func add(_ path: RouterPath, method: HTTPRequest.Method) {
        let segments = path.description.split(separator: "/")
        routes.withLock { routes in
            if let index = routes.firstIndex(where: { $0.segments == segments }) {
                routes[index].methods.insert(method)
            } else {
                routes.append((segments, [method]))
            }
        }
    }

    /// Every route pattern recorded (`/v1/verifications/{id}`) with its methods, in the order first added.
    var patterns: [(path: String, methods: Set<HTTPRequest.Method>)] {
        routes.withLock { routes in routes.map { ("/" + $0.segments.joined(separator: "/"), $0.methods) } }
    }

    /// The methods served at `path`, or nil when no route matches it whatever the method.
    func methods(forPath path: String) -> Set<HTTPRequest.Method>? {
        let requested = path.split(separator: "/")
        // Like the router's trie, a literal segment wins over a parameter at the same depth: only the most
        // specific matching patterns count (`/v1/factors/access-tokens` is not `/v1/factors/{factor_id}`).
        var found: Set<HTTPRequest.Method> = []
        var best: [Bool] = []
        routes.withLock { routes in
            for route in routes where Self.matches(route.segments, requested) {
                let literal = route.segments.map { !Self.isParameter($0) }
                if found.isEmpty || Self.isMoreSpecific(literal, than: best) {
                    found = route.methods
                    best = literal
                } else if literal == best {
                    found.formUnion(route.methods)
                }
            }
        }
        return found.isEmpty ? nil : found
    }

    /// True when `a` has a literal segment where `b`, equal before it, has a parameter.
    private static func isMoreSpecific(_ a: [Bool], than b: [Bool]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x }
        return false
    }

    private static func isParameter(_ segment: Substring) -> Bool {
        segment.hasPrefix(":") || (segment.hasPrefix("{") && segment.hasSuffix("}"))
    }

    /// The `Allow` value for `path`: its methods in a stable order.
    func allowHeader(forPath path: String) -> String? {
        methods(forPath: path).map { $0.map(\.rawValue).sorted().joined(separator: ", ") }
    }

    private static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        guard pattern.count == path.count else { return false }
        return zip(pattern, path).allSatisfy { pattern, segment in
            pattern == segment || isParameter(pattern)
        }
    }
}

/// A router front that records each route in a ``RouteTable`` as it passes it on; groups made from it
/// record with their full path.
struct RecordingRouter<Context: RequestContext>: RouterMethods {
    let router: Router<Context>
    let table: RouteTable

    @discardableResult func on<Responder: HTTPResponder>(
        _ path: RouterPath, method: HTTPRequest.Method, responder: Responder
    ) -> Self where Responder.Context == Context {
        table.add(path, method: method)
        router.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}

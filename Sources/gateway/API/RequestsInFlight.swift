import Hummingbird
import Synchronization

/// The requests being served now that may write to the store: every method but `GET`, `HEAD` and `OPTIONS`,
/// the sandbox's emulators left out (they write to files of their own). The SQLite store's commit delay
/// counts them as the siblings whose writes may still join a group (docs/performance.md, "Commit delay").
final class RequestsInFlight: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func enter() { count.add(1, ordering: .relaxed) }

    func leave() { count.subtract(1, ordering: .relaxed) }
}

/// Counts a request in ``RequestsInFlight`` from when it reaches the routes until its answer is ready.
struct RequestsInFlightMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let requests: RequestsInFlight

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        switch request.method {
        case .get, .head, .options:
            return try await next(request, context)
        default:
            requests.enter()
            defer { requests.leave() }
            return try await next(request, context)
        }
    }
}

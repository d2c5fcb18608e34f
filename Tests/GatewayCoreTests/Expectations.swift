import GatewayCore
import Testing

/// Runs `body`, expecting it to throw a ``GatewayError`` with `code`; returns the error for further checks.
@discardableResult
func expectAsyncGatewayError<Value>(
    _ code: GatewayError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Value
) async -> GatewayError? {
    do {
        let value = try await body()
        Issue.record("expected `\(code.rawValue)`, but it returned \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return check(error, is: code, sourceLocation)
    }
}

/// The synchronous form of ``expectAsyncGatewayError(_:sourceLocation:_:)``.
@discardableResult
func expectGatewayError<Value>(
    _ code: GatewayError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Value
) -> GatewayError? {
    do {
        let value = try body()
        Issue.record("expected `\(code.rawValue)`, but it returned \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return check(error, is: code, sourceLocation)
    }
}

private func check(_ error: any Error, is code: GatewayError.Code, _ sourceLocation: SourceLocation) -> GatewayError? {
    guard let error = error as? GatewayError else {
        Issue.record("expected `\(code.rawValue)`, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(error.code == code, "expected `\(code.rawValue)`, got \(error)", sourceLocation: sourceLocation)
    return error
}

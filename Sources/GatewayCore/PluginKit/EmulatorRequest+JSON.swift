import Foundation

extension EmulatorRequest {
    /// The body decoded as `type` (with `decoder`, a vendor's own such as ``SnakeCaseJSON/decoder``), or `nil` when
    /// it is not one: how an emulator reads a JSON call before it answers the vendor's "invalid body" error.
    public func json<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) -> T? {
        try? decoder.decode(type, from: body)
    }
}

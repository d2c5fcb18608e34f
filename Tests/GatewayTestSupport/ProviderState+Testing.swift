import GatewayCore

extension ProviderState {
    /// The member `key` as text, for tests that read a plugin's state: strings as they are, numbers as
    /// `String(Double)`, booleans as `true`/`false`; `nil` when absent or of another kind.
    public subscript(key: String) -> String? {
        switch json[key] {
        case .string(let value): return value
        case .number(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        default: return nil
        }
    }
}

import Foundation
import GatewayCore
import Hummingbird

/// A Twilio request's form body (`application/x-www-form-urlencoded`): every parameter known to the operation,
/// each given once. An unknown parameter, a repeated one or a body of another type is Twilio's 60200, naming it.
struct TwilioCompatForm {
    private(set) var values: [String: String] = [:]

    init(_ body: Data, contentType: String?, allowing known: Set<String>) throws(TwilioCompatError) {
        guard !body.isEmpty else { return }
        if let contentType, !Self.isForm(contentType) {
            throw TwilioCompatError.invalidParameter(
                "Content-Type", "send the parameters as application/x-www-form-urlencoded, as Twilio's clients do")
        }
        guard let text = String(data: body, encoding: .utf8) else {
            throw TwilioCompatError.invalidParameter("body", "the form is not UTF-8")
        }
        for (key, value) in FormEncoding.decodePairs(text) {
            guard known.contains(key) else {
                throw TwilioCompatError.invalidParameter(key, "this operation takes no such parameter")
            }
            guard values.updateValue(value, forKey: key) == nil else {
                throw TwilioCompatError.invalidParameter(key, "given more than once; give it once")
            }
        }
    }

    subscript(_ key: String) -> String? {
        values[key].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A required parameter: present and not empty.
    func required(_ key: String) throws(TwilioCompatError) -> String {
        guard let value = self[key] else { throw TwilioCompatError.invalidParameter(key, "it is required") }
        return value
    }

    /// A parameter whose value is a JSON object (Twilio's `RateLimits`, `Tags`, `ChannelConfiguration`).
    func jsonObject(_ key: String) throws(TwilioCompatError) -> [String: JSONValue]? {
        guard let text = self[key] else { return nil }
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
            case .object(let fields) = value
        else { throw TwilioCompatError.invalidParameter(key, "it must be a JSON object") }
        return fields
    }

    /// `application/x-www-form-urlencoded`, any case, with or without parameters.
    static func isForm(_ contentType: String) -> Bool {
        var type = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = type.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { type.removeFirst() }
        while let last = type.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { type.removeLast() }
        let expected = "application/x-www-form-urlencoded".utf8
        func lowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return type.count == expected.count && zip(type, expected).allSatisfy { lowercased($0) == $1 }
    }
}

import Foundation
import GatewayCore
import HTTPTypes

/// Where traces go (docs/operations.md, "Traces"): off unless an OTLP endpoint is given, in the file or by the
/// standard OpenTelemetry variables.
struct TracingSettings: Sendable, Equatable {
    /// The full traces URL (`…/v1/traces`).
    var endpoint: URL
    /// Sent with every export (a collector's API key): from `OTEL_EXPORTER_OTLP_HEADERS`, never the file.
    var headers: [String: String] = [:]
    var serviceName = "verification-gateway"
    /// The share of new traces kept; a caller's `traceparent` decides for its own.
    var ratio = 1.0
}

extension GatewayConfiguration {
    /// ```yaml
    /// tracing:
    ///   endpoint: http://127.0.0.1:4318      # the collector's OTLP/HTTP base; /v1/traces is added
    ///   service_name: verification-gateway
    ///   sampling_ratio: 0.1                  # of new traces; a caller's sampled flag is followed
    /// ```
    /// or, without the section, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (`/v1/traces` added), `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER` with `OTEL_TRACES_SAMPLER_ARG`, and
    /// `OTEL_EXPORTER_OTLP_HEADERS`; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turns it off. The file's
    /// values win over the variables. Only `http/protobuf` is spoken.
    mutating func readTracing(_ top: ConfigMap, environment: [String: String]) {
        let section = top.map("tracing", message: "`tracing` must be a mapping with `endpoint`")
        section?.rejectUnknown(["endpoint", "service_name", "sampling_ratio"])
        tracing = Self.tracing(section, environment: environment) { top.problem($0) }
    }

    /// The tracing settings of a `tracing` section (nil: none) and the environment; `problem` hears what is wrong.
    static func tracing(
        _ section: ConfigMap?, environment: [String: String], problem: (String) -> Void
    ) -> TracingSettings? {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true"
            || environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none"
        {
            return nil
        }
        for variable in ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
            if let protocolName = environment[variable], protocolName != "http/protobuf" {
                problem("\(variable)=\(protocolName): the gateway exports traces over http/protobuf only")
                return nil
            }
        }
        var endpoint: URL?
        if let value = section?.value("endpoint") {
            if let base = value.httpURL(
                message: "tracing.endpoint must be an http(s) URL (the collector's OTLP/HTTP base)")
            {
                endpoint = base.appending(path: "v1/traces")
            }
        } else if let full = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], !full.isEmpty {
            endpoint = Self.httpURL(full)
            if endpoint == nil { problem("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http(s) URL") }
        } else if let base = environment["OTEL_EXPORTER_OTLP_ENDPOINT"], !base.isEmpty {
            endpoint = Self.httpURL(base)?.appending(path: "v1/traces")
            if endpoint == nil { problem("OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL") }
        }
        guard let endpoint else { return nil }
        var settings = TracingSettings(endpoint: endpoint)
        if let name = section?.string(
            "service_name", nonEmpty: true, message: "tracing.service_name must be a non-empty string")
        {
            settings.serviceName = name
        } else if let name = environment["OTEL_SERVICE_NAME"], !name.isEmpty {
            settings.serviceName = name
        }
        if let ratio = section?.number(
            "sampling_ratio", in: 0...1, message: "tracing.sampling_ratio must be from 0 to 1")
        {
            settings.ratio = ratio
        } else if let sampler = environment["OTEL_TRACES_SAMPLER"] {
            switch sampler {
            case "always_on", "parentbased_always_on": settings.ratio = 1
            case "always_off", "parentbased_always_off": settings.ratio = 0
            case "traceidratio", "parentbased_traceidratio":
                guard let ratio = Double(environment["OTEL_TRACES_SAMPLER_ARG"] ?? "1"), (0...1).contains(ratio) else {
                    problem("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1")
                    return nil
                }
                settings.ratio = ratio
            default:
                problem(
                    "OTEL_TRACES_SAMPLER=\(sampler) is not one the gateway knows (always_on, always_off, traceidratio)")
                return nil
            }
        }
        for variable in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            for pair in (environment[variable] ?? "").split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).trimmingCharacters(in: .whitespaces).removingPercentEncoding ?? String($0)
                }
                guard parts.count == 2, HTTPField.Name(parts[0]) != nil else {
                    problem("\(variable) must be a list of key=value pairs")
                    return nil
                }
                settings.headers[parts[0]] = parts[1]
            }
        }
        return settings
    }

    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host() != nil
        else { return nil }
        return url
    }
}

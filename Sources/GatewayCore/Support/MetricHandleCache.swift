import CoreMetrics
import Synchronization

/// Metric handles kept by name and labels, so a request looks its counters and timers up in one
/// dictionary instead of asking the factory each time (Prometheus' factory checks and normalizes the name
/// and every label, then looks the series up under its own lock: several of those per request).
///
/// Only for bounded label sets (the gateway's labels are: ids from the configuration, ISO countries,
/// taxonomy codes, route templates, status codes), since every distinct set stays cached.
public final class MetricHandleCache: Sendable {
    struct Key: Hashable {
        var name: String
        var labels: [String]

        init(_ name: String, _ labels: [(String, String)]) {
            self.name = name
            var flat: [String] = []
            flat.reserveCapacity(labels.count * 2)
            for (label, value) in labels {
                flat.append(label)
                flat.append(value)
            }
            self.labels = flat
        }
    }

    /// The factory the handles are made by.
    public let factory: any MetricsFactory
    private let counters = Mutex<[Key: CoreMetrics.Counter]>([:])
    private let timers = Mutex<[Key: CoreMetrics.Timer]>([:])

    /// An empty cache over `factory`.
    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    /// The counter `name` with `labels`, made once.
    public func counter(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Counter {
        let key = Key(name, labels)
        if let counter = counters.withLock({ $0[key] }) { return counter }
        let made = CoreMetrics.Counter(label: name, dimensions: labels, factory: factory)
        return counters.withLock { all in
            if let raced = all[key] { return raced }
            all[key] = made
            return made
        }
    }

    /// The timer `name` with `labels`, made once.
    public func timer(_ name: String, _ labels: [(String, String)]) -> CoreMetrics.Timer {
        let key = Key(name, labels)
        if let timer = timers.withLock({ $0[key] }) { return timer }
        let made = CoreMetrics.Timer(label: name, dimensions: labels, factory: factory)
        return timers.withLock { all in
            if let raced = all[key] { return raced }
            all[key] = made
            return made
        }
    }
}

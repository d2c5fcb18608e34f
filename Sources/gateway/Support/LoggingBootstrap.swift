import Logging

/// Logging goes to standard error, once, here. Every line written while a request is served carries its
/// `request.id`, whichever logger wrote it (``RequestScope``).
enum LoggingBootstrap {
    enum Format: String {
        case text, json
    }

    static func bootstrap(level: Logger.Level, format: Format = .text) {
        LoggingSystem.bootstrap(
            { label, provider in
                switch format {
                case .text:
                    var handler = TextLogHandler(label: label, metadataProvider: provider)
                    handler.logLevel = level
                    return handler
                case .json:
                    var handler = JSONLogHandler(label: label, metadataProvider: provider)
                    handler.logLevel = level
                    return handler
                }
            }, metadataProvider: RequestScope.metadataProvider)
    }
}

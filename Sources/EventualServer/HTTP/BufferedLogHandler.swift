import Logging

/// A log handler that writes StreamLogHandler's lines through a `BufferedLogOutput`: the same
/// text, without a global lock, a time conversion or a write on the request path.
public struct BufferedLogHandler: LogHandler {
    private let label: String
    private let output: BufferedLogOutput
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler for `label` that logs at `level` and up into `output`.
    public init(label: String, output: BufferedLogOutput, level: Logger.Level = .info,
                metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.output = output
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        // NB: a provider reads task-locals, so it is asked here, on the logging task, not when the line is written.
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { $1 } }
        output.append(label: label, metadata: merged, event: event)
    }
}

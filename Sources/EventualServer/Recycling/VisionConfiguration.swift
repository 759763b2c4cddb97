import Foundation

/// Where scan photos are classified: any OpenAI-compatible chat-completions API (a hosted one,
/// Ollama, llama.cpp's server).
public struct VisionConfiguration: Sendable {
    /// The API's base URL, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    public var baseURL: URL
    /// The model to ask, e.g. `llava` or `gpt-4o`.
    public var model: String
    /// Sent as `Authorization: Bearer …` when set. Never logged, never sent to a client.
    public var apiKey: String?
    /// How long the model may take to answer before the scan is answered 503 (retry later).
    public var timeout: Duration

    public init(baseURL: URL, model: String, apiKey: String? = nil, timeout: Duration = .seconds(20)) {
        self.baseURL = baseURL
        self.model = model
        self.apiKey = apiKey
        self.timeout = timeout
    }

    /// `baseURL` + `/chat/completions`, or a ConfigurationError when it is not an http(s) URL.
    func endpoint() throws -> URL {
        guard let scheme = baseURL.scheme?.lowercased(), ["http", "https"].contains(scheme), baseURL.host != nil else {
            throw ConfigurationError("--vision-url must be an http:// or https:// URL (the API's base, e.g. http://127.0.0.1:11434/v1)")
        }
        guard !model.isEmpty else { throw ConfigurationError("--vision-model must name the model to ask") }
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text + "/chat/completions") else { throw ConfigurationError("--vision-url is not a valid URL") }
        return url
    }
}

/// Why a scan photo could not be classified now (the scan is not stored: a retry classifies it later).
enum VisionFailure: Error, CustomStringConvertible {
    /// The model timed out, refused the connection or answered an error status: 503, retry later.
    /// The reason reads after "the vision model": "did not answer within 20 s".
    case unavailable(String)
    /// The model answered something that is not a chat completion: 502.
    case badAnswer(String)

    var description: String {
        switch self {
        case .unavailable(let reason): return "the vision model \(reason)"
        case .badAnswer(let reason): return "the vision model's answer was not understood: \(reason)"
        }
    }
}

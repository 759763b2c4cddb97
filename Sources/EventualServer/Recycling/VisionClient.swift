import AsyncHTTPClient
import EventualAPI
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// Asks a vision model behind an OpenAI-compatible chat-completions endpoint which of the 15
/// trash types a photo shows.
struct VisionClient: Sendable {
    let endpoint: URL
    let model: String
    let apiKey: String?
    let timeout: Duration

    /// The largest answer read (a chat completion of a few words is a few hundred bytes).
    static let maxAnswerBytes = 1024 * 1024

    init(_ configuration: VisionConfiguration) throws {
        endpoint = try configuration.endpoint()
        model = configuration.model
        apiKey = configuration.apiKey
        timeout = configuration.timeout
    }

    static let instructions = """
        You sort trash for a campus recycling app. Look at the photo and name the one piece of trash it shows, \
        answering with exactly one of these trash types and nothing else: \
        \(TrashType.allCases.map(\.rawValue).joined(separator: ", ")). \
        If the photo shows no piece of trash, or none of these, answer exactly: no item detected
        """

    /// The request body: the instructions, then the photo as a `data:` URL.
    func requestBody(photo: Data, mimeType: String) throws -> Data {
        let body: [String: Any] = [
            "model": model,
            "temperature": 0,
            "max_tokens": 20,
            "messages": [
                ["role": "system", "content": Self.instructions],
                ["role": "user", "content": [
                    ["type": "text", "text": "Which trash type is this? Answer with the type only."],
                    ["type": "image_url", "image_url": ["url": "data:\(mimeType);base64,\(photo.base64EncodedString())"]],
                ]],
            ],
        ]
        return try JSONSerialization.data(withJSONObject: body, options: [.withoutEscapingSlashes])
    }

    /// The trash type the model named, or nil for "no item detected" (or anything off the list).
    func classify(photo: Data, mimeType: String) async throws(VisionFailure) -> TrashType? {
        let payload: Data
        do {
            payload = try requestBody(photo: photo, mimeType: mimeType)
        } catch {
            throw .badAnswer("the request could not be encoded")
        }
        let (url, apiKey) = (endpoint.absoluteString, self.apiKey)
        let timeout = self.timeout
        // NB: a client of its own that does not retry a failed connection: the shared one keeps
        // retrying a refused connection until the deadline, so a model that is down cost every
        // scan the whole --vision-timeout. A vision call takes seconds; a new connection is nothing beside it.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .nanoseconds(Int64(timeout.nanoseconds))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let outcome: Result<(status: UInt, body: ByteBuffer), VisionFailure>
        do {
            outcome = try await withThrowingTaskGroup(of: Result<(status: UInt, body: ByteBuffer), VisionFailure>.self) { group in
                group.addTask {
                    // NB: made inside the task: a request with a body is not Sendable.
                    var request = HTTPClientRequest(url: url)
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.headers.add(name: "Accept", value: "application/json")
                    if let apiKey, !apiKey.isEmpty { request.headers.add(name: "Authorization", value: "Bearer \(apiKey)") }
                    request.body = .bytes(ByteBuffer(bytes: payload))
                    let response = try await client.execute(request, timeout: .nanoseconds(Int64(timeout.nanoseconds)))
                    guard (200..<300).contains(response.status.code) else {
                        return .failure(.unavailable("answered HTTP \(response.status.code)"))
                    }
                    do {
                        return .success((response.status.code, try await response.body.collect(upTo: Self.maxAnswerBytes)))
                    } catch is NIOTooManyBytesError {
                        return .failure(.badAnswer("its answer is larger than \(Self.maxAnswerBytes / 1024) KiB"))
                    }
                }
                // NB: execute's own timeout ends at the response head; this one also covers the body.
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return .failure(.unavailable("did not answer within \(timeout.components.seconds) s"))
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
        } catch let error as HTTPClientError where [.deadlineExceeded, .connectTimeout, .readTimeout].contains(error) {
            outcome = .failure(.unavailable("did not answer within \(timeout.components.seconds) s"))
        } catch let error where Self.isRefused(error) {
            outcome = .failure(.unavailable("refused the connection"))
        } catch {
            outcome = .failure(.unavailable("cannot be reached (\(LogSafe.describe(error)))"))
        }
        try? await client.shutdown()
        let body = try outcome.get()
        return try Self.trashType(inAnswer: Data(body.body.readableBytesView))
    }

    /// Whether `error` is a connection refused (nothing listens at the model's address).
    static func isRefused(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        if let error = error as? NIOConnectionError { return !error.connectionErrors.isEmpty && error.connectionErrors.allSatisfy { isRefused($0.error) } }
        return false
    }

    /// Reads `choices[0].message.content` of a chat completion: a trash type, or nil when the
    /// model named none (or more than one). Throws when the answer is not a chat completion.
    static func trashType(inAnswer data: Data) throws(VisionFailure) -> TrashType? {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let choices = root["choices"] as? [Any], let first = choices.first as? [String: Any],
              let message = first["message"] as? [String: Any]
        else { throw .badAnswer("its answer is not a chat completion (no choices[0].message)") }
        switch message["content"] {
        case let text as String:
            return TrashType(answer: text)
        case let parts as [Any]:
            // Some servers answer content as a list of parts; only the text parts count.
            let text = parts.compactMap { ($0 as? [String: Any])?["text"] as? String }.joined(separator: " ")
            return TrashType(answer: text)
        default:
            // A refusal or an empty answer names no trash type.
            return nil
        }
    }
}

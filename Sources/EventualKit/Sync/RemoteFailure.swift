import AsyncHTTPClient
import EventualAPI
import Foundation
import OpenAPIRuntime

/// Why a request to the server did not succeed, sorted by what the engine does about it. Its
/// `description` is one short sentence for people, built from the failure's kind: never from the
/// description of a client or transport error (that holds the request, its body, a password).
public enum RemoteFailure: Error, Equatable, CustomStringConvertible {
    /// The server could not be reached, or the answer was lost: retry with backoff. The text is a
    /// whole sentence for people ("The server at … accepted the connection but did not answer in 5 s").
    case unreachable(String)
    /// 408, 409, 429 or 5xx: retry with backoff.
    case transient(status: Int, message: String)
    /// Any other 4xx: the server refuses this for good. Shown to the user.
    case rejected(status: Int, message: String)
    /// 401: the access token expired or was revoked; sync waits for a new sign-in.
    case unauthorized(String)
    /// 409 `upgrade_required`: this version of the app is below the oldest the server syncs. What
    /// waits stays on the device; the engine stops syncing this app until it is updated (or
    /// `SyncEngine.upgradeRecheck` has passed), rather than asking again in a loop.
    case upgradeRequired(String)
    /// This device could not save what the round sent or brought (its disk is full, its database
    /// failed): the network is not at fault, and the next round tries again (`DeviceStorageFailure`).
    case deviceStorage(String)

    /// The code of a 409 that says the app must be updated to sync.
    static let upgradeRequiredCode = "upgrade_required"

    /// Sorts an HTTP status other than success.
    public static func status(_ code: Int, message: String) -> RemoteFailure {
        switch code {
        case 401: return .unauthorized(message)
        case 408, 409, 429, 500...: return .transient(status: code, message: message)
        default: return .rejected(status: code, message: message)
        }
    }

    /// Sorts any error of a request (the generated client's, the transport's, the engine's own)
    /// into a failure whose text says only what kind of failure it was.
    public static func from(_ error: any Error) -> RemoteFailure {
        from(error, server: nil, timeouts: nil)
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): return reason
        case .transient(let status, let message):
            // NB: an answer without our error shape has only its status to say. A 429 with the
            // server's words ("Too many failed sign-ins; try again in 7 min") is not the server
            // failing: those words are the whole story.
            if status == 429, message != "HTTP 429" { return message }
            return "The server is busy or failing (HTTP \(status))" + (message == "HTTP \(status)" ? "" : ": \(message)")
        case .rejected(_, let message): return message
        // NB: the server's words ("Missing access token: send 'Authorization: Bearer …'") are for
        // developers; whatever ended the sign-in, a person has one thing to do.
        case .unauthorized: return "The server no longer accepts this device's sign-in (it ended or was signed out): sign in again"
        case .deviceStorage(let sentence): return sentence
        // NB: the server's words say what to do ("Update the app to sync: version 1 of …").
        case .upgradeRequired(let message): return message.hasPrefix("Update the app") ? message : "Update the app to sync: \(message)"
        }
    }
}

extension RemoteFailure {
    static func from(_ error: any Error, server: URL?, timeouts: ServerLink.Timeouts?) -> RemoteFailure {
        if let failure = error as? RemoteFailure { return failure }
        let clientError = error as? ClientError
        let server = name(server ?? clientError?.baseURL)
        let cause = rootCause(of: error)
        if let failure = cause as? RemoteFailure { return failure }
        // NB: a local write that failed in the round (a pull's page, a push's acknowledgement) is
        // no failure of the network: "No connection" would send a person looking at their Wi-Fi.
        if let sentence = DeviceStorageFailure.sentence(for: cause) { return .deviceStorage(sentence) }
        if let status = clientError?.response?.status.code, status >= 400 {
            return .status(status, message: "\(theServer(server)) answered HTTP \(status)")
        }
        if cause is DecodingError {
            return .unreachable("\(theServer(server)) sent an answer this app cannot read")
        }
        return .unreachable(sentence(for: cause, server: server, timeouts: timeouts))
    }

    /// The error at the bottom of the generated client's wrappers: `ClientError`, and inside it
    /// the runtime's "the transport failed" or "a middleware failed".
    static func rootCause(of error: any Error) -> any Error {
        var current = error
        for _ in 0..<8 {
            if let clientError = current as? ClientError {
                current = clientError.underlyingError
            } else if String(reflecting: type(of: current)).hasPrefix("OpenAPIRuntime."), let inner = wrapped(in: current) {
                // NB: OpenAPIRuntime's RuntimeError is internal: its wrapping cases are read by reflection.
                current = inner
            } else {
                break
            }
        }
        return current
    }

    /// An error carried in an enum case's payload (alone or in a tuple), if any.
    private static func wrapped(in error: any Error) -> (any Error)? {
        guard let payload = Mirror(reflecting: error).children.first?.value else { return nil }
        if let inner = payload as? any Error { return inner }
        return Mirror(reflecting: payload).children.lazy.compactMap { $0.value as? any Error }.first
    }

    /// One sentence for a transport failure. NB: the error's own text is looked at, never shown:
    /// a TLS error's holds a build path, a client error's the request.
    private static func sentence(for cause: any Error, server: String, timeouts: ServerLink.Timeouts?) -> String {
        if let error = cause as? HTTPClientError {
            switch error {
            case .readTimeout:
                let wait = timeouts.map { " in \(seconds($0.firstByte))" } ?? " in time"
                return "\(theServer(server)) accepted the connection but did not answer\(wait)"
            case .connectTimeout:
                return "No connection to \(server)" + (timeouts.map { " within \(seconds($0.connect))" } ?? " in time")
            case .deadlineExceeded, .writeTimeout, .getConnectionFromPoolTimeout:
                return "\(theServer(server)) did not finish answering in time"
            case .remoteConnectionClosed:
                return "\(theServer(server)) closed the connection"
            case .tlsHandshakeTimeout:
                return "No secure connection to \(server) (the TLS handshake timed out)"
            case .cancelled, .requestStreamCancelled:
                return "The request to \(server) was cancelled"
            case .invalidURL, .emptyHost, .emptyScheme:
                return "\(server) is not a server address: use one like http://127.0.0.1:8080"
            default:
                break
            }
        }
        if cause is CancellationError { return "The request to \(server) was cancelled" }
        if cause is DeadlineExceeded { return "\(theServer(server)) took too long to answer" }
        let text = String(describing: cause).lowercased()
        if text.contains("refused") { return "No connection to \(server) (connection refused)" }
        if ["ssl", "tls", "certificate", "handshake"].contains(where: text.contains) {
            return "No secure connection to \(server) (TLS failed): check the address and the server's certificate"
        }
        if ["getaddrinfo", "dns", "resolve", "unknown host", "no address"].contains(where: text.contains) {
            return "No connection to \(server) (its host name is unknown)"
        }
        if text.contains("reset") || text.contains("broken pipe") { return "The connection to \(server) was cut" }
        if text.contains("timeout") || text.contains("timed out") { return "No answer from \(server) in time" }
        if text.contains("unreachable") { return "No connection to \(server) (no route to it)" }
        return "No connection to \(server)"
    }

    /// The server as people typed it: scheme, host and port, never a path or a query.
    /// "The server at http://…", or "The server" when its address is not known (never "The server
    /// at the server").
    private static func theServer(_ name: String) -> String {
        name == "the server" ? "The server" : "The server at \(name)"
    }

    static func name(_ url: URL?) -> String {
        guard let url, let host = url.host else { return "the server" }
        return "\(url.scheme ?? "http")://" + (host.contains(":") ? "[\(host)]" : host) + (url.port.map { ":\($0)" } ?? "")
    }

    private static func seconds(_ duration: Duration) -> String {
        let millis = duration.milliseconds
        return millis % 1000 == 0 ? "\(millis / 1000) s" : "\(Double(millis) / 1000) s"
    }
}

// MARK: - The generated client's answers

extension RemoteFailure {
    /// An answer the contract does not list (a proxy's 502, a newer server's status): "`doing`
    /// failed (HTTP 502)", said the same way by every call of every app.
    public static func undocumented(_ status: Int, doing what: String) -> RemoteFailure {
        .status(status, message: "\(what) failed (HTTP \(status))")
    }
}

extension Components.Schemas._Error {
    /// The failure an error answer of the contract says: its status and its message, retried or
    /// failed by its status (`RemoteFailure.status`).
    public var remoteFailure: RemoteFailure { .status(statusCode, message: message) }
}

import EventualAPI
import Foundation

/// One message the server sends a person (a verification code).
public struct Mail: Sendable, Equatable {
    public let from: String
    public let to: String
    public let subject: String
    public let body: String

    public init(from: String, to: String, subject: String, body: String) {
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
    }

    /// The message as RFC 5322 text with CRLF line ends (headers, a blank line, the body).
    var rfc5322: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        let date = formatter.string(from: Date())
        let lines = ["From: \(from)", "To: \(to)", "Subject: \(subject)", "Date: \(date)",
                     "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", ""]
            + body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}

/// Sends mail. NB: a mail's content (a code) never goes to the log, whatever the level.
public protocol MailSender: Sendable {
    func send(_ mail: Mail) async throws
}

/// How the server sends mail: through an SMTP relay, or as files in a folder (development,
/// tests, or a relay that picks them up).
public enum MailDelivery: Sendable, Equatable {
    /// `smtp://[user:password@]host[:port]` (plain SMTP; port 25 by default).
    case smtp(URL)
    /// One `.eml` file per mail in this folder, created if needed.
    case directory(String)

    func sender() throws -> any MailSender {
        switch self {
        case .smtp(let url): return try SMTPMailer(url: url)
        case .directory(let path): return MailDirectory(path: path)
        }
    }
}

/// Drops each mail as a file `<time>-<random>.eml`, readable only by the server's user.
struct MailDirectory: MailSender {
    let path: String

    func send(_ mail: Mail) async throws {
        let folder = URL(fileURLWithPath: path, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let name = "\(UnixMillis.now())-\(UUID().uuidString.prefix(8).lowercased()).eml"
        let file = folder.appendingPathComponent(name)
        // NB: written under a temporary name and renamed, so a reader never sees half a mail.
        let partial = folder.appendingPathComponent("." + name + ".part")
        guard FileManager.default.createFile(atPath: partial.path, contents: Data(mail.rfc5322.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw MailError("cannot write a mail file in \(path)")
        }
        try FileManager.default.moveItem(at: partial, to: file)
    }
}

/// Why a mail was not sent (never its content).
public struct MailError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

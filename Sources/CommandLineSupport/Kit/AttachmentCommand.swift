import ArgumentParser
import EventualAPI
import EventualKit
import Foundation

/// An app whose records carry a photo (a pantry item's, a SpendiQ transaction's receipt): the kit's
/// `ShowAttachment` shows where it is or saves it, in the app's words.
public protocol AppWithAttachments: AppCommand {
    /// The subcommand and what it shows: "photo" of an "item", "receipt" of a "transaction".
    static var attachmentNoun: (command: String, noun: String, record: String) { get }
    /// The photo of the record `id` names (its 8-character id), with how to say it.
    static func attachment(of id: String, _ user: User) throws -> RecordAttachment
}

/// A record's photo as `ShowAttachment` says it.
public struct RecordAttachment {
    /// "Photo of Jam", "Receipt of EUR 9.00 on food".
    public let title: String
    /// Nil when the record has none.
    public let reference: AttachmentReference?
    /// The space the record is in, to download the photo from it.
    public let space: String?
    /// What to say when it has none: "Jam has no photo (pantry edit 1a2b3c4d --photo FILE adds one)."
    public let missing: String

    public init(title: String, reference: AttachmentReference?, space: String?, missing: String) {
        self.title = title
        self.reference = reference
        self.space = space
        self.missing = missing
    }
}

/// `photo ID` / `receipt ID`: where a record's photo is (this device, waiting to upload, the
/// server), or `--save FILE` to write it out.
public struct ShowAttachment<App: AppWithAttachments>: AsyncParsableCommand {
    public static var configuration: CommandConfiguration {
        let (command, noun, record) = App.attachmentNoun
        return CommandConfiguration(commandName: command,
                                    abstract: "A\(record.first.map { "aeiou".contains($0) } == true ? "n" : "") \(record)'s \(noun): "
                                        + "where it is (this device, waiting to upload, the server), or --save FILE to write it out.")
    }

    @OptionGroup var global: SharedOptions<App>
    @Argument(help: ArgumentHelp("The \(App.attachmentNoun.record)'s 8-character id (\(App.words.command) list shows it).")) var id: String
    @Option(help: ArgumentHelp("Write the \(App.attachmentNoun.noun) to this file (downloading it if this device has none); "
                               + "never over an existing file; - for standard output.")) var save: String?

    public init() {}

    public func validate() throws {
        if save?.isEmpty == true { throw ValidationError("--save needs a file name, not an empty one (- for standard output)") }
    }

    public func run() async throws {
        let user = try await App.open(global, network: false)
        let shown = try App.attachment(of: id, user)
        guard let reference = shown.reference else { throw CLIError(shown.missing) }
        if let save {
            // NB: not wrapped: a path cut in two lines cannot be copied.
            if let saved = try await AttachmentWords.save(reference, space: shown.space, to: save, with: user.attachments) { print(saved) }
        } else {
            Terminal.say("\(shown.title): \(try AttachmentWords.describe(reference, in: user.attachments)).")
        }
    }
}

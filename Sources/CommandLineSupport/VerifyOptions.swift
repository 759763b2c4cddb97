import ArgumentParser

/// What `verify` takes in every app: the mailed code, or `--resend` for a new one, and the email
/// when it is not the app's default. The apps differ only in that default and what they say after.
public struct VerifyOptions: ParsableArguments {
    @Argument(help: "The 6 digits of the mail.") public var code: String?
    @Option(help: "The email to confirm (default: the app's own: the signed-in account's, or the last registration here).")
    public var email: String?
    @Flag(help: "Mail a new code instead (the previous one stops working once it comes).") public var resend = false

    public init() {}

    public func validate() throws {
        try usageCheck {
            if resend, code != nil { throw CLIError("Give either a CODE or --resend, not both") }
            if !resend, code == nil { throw CLIError("Give the CODE from the mail, or --resend for a new one") }
        }
    }

    /// What a resend says: nothing tells whether the address has an account waiting for a code.
    public static func resent(to address: String) -> String {
        "If \(address) is registered and not confirmed yet, a new code is on its way"
            + " (at most one a minute: until it comes, the last code still works)."
    }
}

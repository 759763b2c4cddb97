import CommandLineSupport
import Spending

/// How `spendiq` speaks of the Spending model's errors: what to type to act on one, and which are
/// a value typed wrong (status 64).
struct ErrorHints: CommandHints {
    func message(for error: SpendingError) -> String? {
        switch error {
        case .notSignedIn: "\(error): run `spendiq login --email EMAIL` first"
        case .noSuchAccount: "\(error): see spendiq accounts, or add one with spendiq accounts add NAME --currency EUR"
        case .noSuchTransaction: "\(error): see spendiq list"
        case .notVerified: "\(error): `spendiq verify --resend` mails you a code, then type it with `spendiq verify CODE` and log in again"
        case .offlineTooLongWithPendingChanges(let days, let count, let email):
            "No online sign-in for over \(days) days, and \(count) change(s) have not reached the server: go online and run spendiq login --email \(email) to send them"
        case .noPosition: "\(error): give one with --near LAT,LON, or record it with spendiq locate LAT,LON"
        case .noPendingRegistration: "\(error): give --email EMAIL"
        case .nothingToChange(let fields): "Nothing to change: give " + Self.either(fields.map { "--" + (Self.optionNames[$0] ?? $0) })
        case .whichAccount: "\(error) Give --account NAME"
        case .amountNeeded: "\(error) (--amount)"
        case .invalidDays(let days): "--days must be from 1 to 36600, not \(days)"
        case .unknownColumn(let role): "--map knows date, amount and description, not '\(role)'"
        case .missingColumn(_, let column, _): "\(error): name it with --map \(column)=COLUMN"
        case .invalidRadius(let radius): "--radius must be from 1 to 20000 metres, not \(radius)"
        case .invalidOfferLimit(let limit): "--limit must be from 1 to 1000 offers, not \(limit)"
        case .mixedDecimalSeparators, .undecidedDecimalSeparator: "\(error): give --decimal . or --decimal ,"
        case .mixedDateOrders, .undecidedDateOrder: "\(error): give --dates dmy or --dates mdy"
        default: nil
        }
    }

    func isMalformedArgument(_ error: SpendingError) -> Bool {
        switch error {
        case .invalidAmount, .amountTooLarge, .ambiguousAmount, .tooManyDecimals, .invalidCurrency, .invalidDate, .invalidCoordinates, .idTooShort,
             .invalidField, .transferToItself, .negativeAmount, .currencyMismatch, .futureDate, .dateOutOfRange, .invalidColour,
             .nothingToChange, .whichAccount, .amountNeeded, .invalidDays, .unknownColumn, .invalidRadius, .invalidOfferLimit:
            true
        default:
            false
        }
    }

    /// The option that changes a field the model names in words.
    private static let optionNames = ["position": "at"]

    /// "--name, --kind or --colour".
    private static func either(_ options: [String]) -> String {
        options.count < 2 ? options.joined() : options.dropLast().joined(separator: ", ") + " or " + options[options.count - 1]
    }
}

import EventualAPI
import Foundation

/// Why a SpendiQ action did not happen, in words for the person who asked; how to act on it is
/// the app's to add (a command's options, a screen's buttons).
public enum SpendingError: Error, Equatable, CustomStringConvertible {
    case notSignedIn
    case invalidAmount(String)
    /// An amount beyond `AmountText.maxMinor`: a typing mistake, or a file's column that is not money.
    case amountTooLarge(String, currency: String)
    /// "-5" where an amount above zero goes (an expense is money out, an income money in).
    case negativeAmount(String)
    /// "$5" or "USD 5" in an account of another currency: never converted, never guessed.
    case currencyMismatch(String, currency: String)
    /// "1.234" in a currency of two decimals: 1.23 or 1234? Never guessed.
    case ambiguousAmount(String, currency: String, digits: Int, readings: [String])
    case tooManyDecimals(String, currency: String, digits: Int, typed: Int)
    /// A file whose amounts use both a decimal point and a decimal comma.
    case mixedDecimalSeparators(dot: String, comma: String)
    /// A file whose amounts never say which separator is the decimal one, and one of them reads two ways.
    case undecidedDecimalSeparator(example: String)
    case invalidCurrency(String)
    case invalidDate(String)
    /// A date after tomorrow: a transaction is something that happened.
    case futureDate(String)
    /// A date before 1970.
    case dateOutOfRange(String)
    /// A file whose dates like "01/02/2026" never say whether the day or the month comes first.
    case undecidedDateOrder(example: String)
    /// A file with dates only day-first can be ("20/11/2026") and others only month-first can be ("11/20/2026").
    case mixedDateOrders(dayFirst: String, monthFirst: String)
    case invalidColour(String)
    case invalidCoordinates(String)
    case invalidField(String)
    /// An edit that changes nothing; `fields` are what it could change, in words ("name", "place").
    case nothingToChange(fields: [String])
    /// A transaction, or a bank file's rows, without the account they belong to.
    case whichAccount(ofFile: Bool)
    /// A transaction moved to an account of another currency without its amount in that currency.
    case amountNeeded(account: String, currency: String)
    /// A number of days to look back outside 1 to 36600.
    case invalidDays(Int)
    /// A bank file's column named for something the import does not read.
    case unknownColumn(String)
    /// A bank file without a column the import needs (`header`: its first line, for the person).
    case missingColumn(file: String, column: String, header: String)
    /// A radius for offers outside 1 to 20000 metres.
    case invalidRadius(Int)
    /// A number of offers outside 1 to 1000.
    case invalidOfferLimit(Int)
    case noSuchAccount(String)
    /// Two accounts of one name (opened offline on two devices): their ids tell them apart.
    case ambiguousAccount(String, ids: [String])
    case accountExists(String)
    case archivedAccount(String)
    case noSuchTransaction(String)
    case ambiguousTransaction(String, matches: Int)
    /// Fewer characters of an id than lists show.
    case idTooShort(String)
    case transferCurrencies(from: String, to: String)
    case transferToItself
    /// A transfer between an account shared in a space and one that is not in it.
    case transferAcrossSpaces(from: String, to: String)
    /// A write to an account shared with the person as a viewer (`space`: the space it is in).
    case viewerOf(account: String, space: String)
    /// An account shared already, with someone else (`with`: who, as this device knows).
    case alreadyShared(String, with: [String])
    /// A share whose invitation the server refused before anything moved (`reason`: its words).
    case inviteeRefused(String, reason: String)
    /// An account in the person's own space, for a command about a shared one.
    case notShared(String)
    /// An account someone else shares with the person, for a command of its owner (`owner`: who, when known).
    case sharedWithYou(String, owner: String?)
    case notVerified
    case wipedAfterOfflineAge(days: Int)
    case offlineTooLongWithPendingChanges(days: Int, count: Int, email: String)
    case otherPersonOnDevice(username: String)
    case noPosition
    case offersNeedConnection
    case insightsNeedConnection
    /// The server was reached and did not answer in time, and no copy of `what` is saved here.
    case notAnswering(String)
    case noPendingRegistration
    case server(String)
    /// A change refused on the device for what it knows, as the server would refuse it (an owner
    /// leaving while others are in): not a mistake in what was typed (exit 1, not 64).
    case refused(String)
    case unreachable(String)
    case file(String)
    /// An export asked to write over a file that is already there.
    case exportExists(String)
    /// An export asked to write over a device, a folder or a pipe.
    case exportNotAFile(String)

    public var description: String {
        switch self {
        case .notSignedIn: return "Not signed in"
        case .invalidAmount(let text): return "'\(text)' is not an amount: use a number above zero like 12.50, with at most the currency's decimals"
        case .amountTooLarge(let text, let currency):
            return "'\(text)' is more than the largest amount recorded, \(Money(minorUnits: AmountText.maxMinor, currency: currency))"
        case .negativeAmount(let text):
            return "'\(text)' is below zero: an amount is above zero (an expense is money out, an income money in, a transfer goes from one account to another)"
        case .currencyMismatch(let text, let currency):
            return "'\(text)' names another currency than \(currency), the account's: type the amount in \(currency) (amounts are never converted)"
        case .ambiguousAmount(_, let currency, let digits, let readings):
            return "\(currency) has \(Self.decimals(digits)): did you mean \(readings.joined(separator: " or "))?"
        case .tooManyDecimals(let text, let currency, let digits, let typed):
            return "\(currency) has \(Self.decimals(digits)), and '\(text)' has \(typed): type at most \(digits)"
        case .mixedDecimalSeparators(let dot, let comma):
            return "The file's amounts use both a decimal point ('\(dot)') and a decimal comma ('\(comma)')"
        case .undecidedDecimalSeparator(let example):
            return "The file's amounts do not say whether '\(example)' has a decimal point or a thousands separator"
        case .invalidCurrency(let text): return "'\(text)' is not a currency: use an ISO 4217 code such as EUR, USD or COP"
        case .invalidDate(let text):
            return "'\(text)' is not a date: use 2026-11-20, 2026-11-20T14:30, 2026-11-20T14:30+01:00 (or Z), today or yesterday"
        case .futureDate(let text): return "'\(text)' is in the future: a transaction is something that happened (tomorrow at the latest)"
        case .dateOutOfRange(let text): return "'\(text)' is out of range: dates go from 1970-01-01 to tomorrow"
        case .undecidedDateOrder(let example):
            return "The file's dates do not say whether '\(example)' has the day or the month first"
        case .mixedDateOrders(let dayFirst, let monthFirst):
            return "The file's dates put the day first ('\(dayFirst)') and the month first ('\(monthFirst)')"
        case .invalidColour(let text):
            return "'\(text)' is not a colour: use a name (\(AccountColours.names.prefix(8).joined(separator: ", ")), …) or #RRGGBB like #2a9d8f"
        case .invalidCoordinates(let text): return "'\(text)' is not a position: use LATITUDE,LONGITUDE like 43.7384,7.4246"
        case .invalidField(let message): return message
        case .nothingToChange(let fields): return "Nothing to change: give a new " + Self.either(fields)
        case .whichAccount(let ofFile): return ofFile ? "Which account do the file's rows belong to?" : "Which account?"
        case .amountNeeded(let account, let currency): return "\(account) holds \(currency): give the amount in it too"
        case .invalidDays(let days): return "The days to look back go from 1 to 36600, not \(days)"
        case .unknownColumn(let role): return "A file's columns are read as date, amount and description, not '\(role)'"
        case .missingColumn(let file, let column, let header): return "\(file) has no \(column) column (header: \(header))"
        case .invalidRadius(let radius): return "Offers are looked for from 1 to 20000 metres around, not \(radius)"
        case .invalidOfferLimit(let limit): return "A list shows 1 to 1000 offers, not \(limit)"
        case .noSuchAccount(let name): return "No account '\(name)'"
        case .ambiguousAccount(let name, let ids):
            return "\(ids.count) accounts are named '\(name)': give the 8-character id of the one you mean (\(ids.joined(separator: ", ")))"
        case .accountExists(let name): return "There is already an account named '\(name)'"
        case .archivedAccount(let name): return "The account '\(name)' is archived"
        case .noSuchTransaction(let id): return "No transaction \(id)"
        case .ambiguousTransaction(let id, let matches): return "\(id) matches \(matches) transactions: give more of the id"
        case .idTooShort(let id): return "'\(id)' is too short to pick one safely: give the 8 characters of the id that lists show"
        case .transferCurrencies(let from, let to): return "A transfer moves one currency: the accounts hold \(from) and \(to)"
        case .transferToItself: return "A transfer needs two different accounts"
        case .transferAcrossSpaces(let from, let to):
            return "\(from) and \(to) are not in the same space: delete this transfer and make another with spendiq transfer AMOUNT --from \(from) --to \(to)"
        case .viewerOf(let account, let space):
            return "You can only look at \(account) (viewer of \(space)): only its owner and editors change it"
        case .alreadyShared(let name, let with):
            return with.isEmpty ? "\(name) is shared already" : "\(name) is shared with \(with.joined(separator: ", ")) already"
        case .inviteeRefused(let person, let reason):
            return "\(person) cannot be invited (\(reason.hasSuffix(".") ? String(reason.dropLast()) : reason)): nothing was shared"
        case .notShared(let name): return "\(name) is yours alone: share it with spendiq accounts share \(name) --with USER"
        case .sharedWithYou(let name, let owner):
            return "\(owner ?? "Its owner") shares \(name) with you: only they change who sees it; leave it with spendiq accounts leave \(name)"
        case .notVerified:
            return "SpendiQ needs a confirmed email, and this account's is not confirmed yet"
        case .wipedAfterOfflineAge(let days):
            return "No online sign-in for over \(days) days: this device's SpendiQ data was removed (it is safe on the server). Connect and sign in again"
        case .offlineTooLongWithPendingChanges(let days, let count, let email):
            return "No online sign-in for over \(days) days, and \(count) change(s) have not reached the server: go online and sign in as \(email) to send them"
        case .otherPersonOnDevice(let username):
            return "This device holds \(username)'s data: only \(username) can sign in here offline. Connect to sign in as someone else"
        case .noPosition: return "No position yet"
        case .offersNeedConnection: return "Connect to load offers near you"
        case .insightsNeedConnection: return "Connect to load your insights"
        case .notAnswering(let what): return "The server is not answering, and no \(what) are saved on this device: try again once it answers"
        case .noPendingRegistration: return "No registration waits for a code on this device"
        case .server(let message), .refused(let message): return message
        case .unreachable(let reason): return reason
        case .file(let message): return message
        case .exportExists(let path): return "\(path) already exists: choose another name, or say to write over it"
        case .exportNotAFile(let path): return "\(path) is not a regular file (a device, a folder or a pipe): choose a file name"
        }
    }

    /// "name, kind or colour".
    private static func either(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
    }

    /// "2 decimals", "no decimals".
    private static func decimals(_ digits: Int) -> String {
        digits == 0 ? "no decimals" : digits == 1 ? "1 decimal" : "\(digits) decimals"
    }
}

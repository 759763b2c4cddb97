import EventualKit
import Spending

extension SpendingError {
    /// A value typed on the command line that cannot be one (status 64, like any usage mistake).
    var isMalformedArgument: Bool {
        switch self {
        case .invalidAmount, .ambiguousAmount, .tooManyDecimals, .invalidCurrency, .invalidDate, .invalidCoordinates, .idTooShort,
             .invalidField, .transferToItself, .negativeAmount, .currencyMismatch, .futureDate, .dateOutOfRange, .invalidColour:
            return true
        default:
            return false
        }
    }
}

extension OutboxError {
    /// An entry id too short to pick one change is typed wrong, like any malformed argument.
    var isMalformedArgument: Bool {
        if case .idTooShort = self { true } else { false }
    }
}

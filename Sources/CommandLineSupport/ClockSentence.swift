extension Terminal {
    /// How far the device's clock is off, for every app's `sync` and `status`:
    /// "This device's clock is 2 days behind the server's: set it right."
    public static func clockSentence(aheadBySeconds: Int64) -> String {
        let seconds = abs(aheadBySeconds)
        let amount = switch seconds {
        case ..<120: "\(seconds) s"
        case ..<7200: "\(seconds / 60) min"
        case ..<172_800: "\(seconds / 3600) h"
        default: "\(seconds / 86_400) days"
        }
        return "This device's clock is \(amount) \(aheadBySeconds > 0 ? "ahead of" : "behind") the server's: set it right."
    }
}

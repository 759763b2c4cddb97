import Foundation

/// What an event may carry, checked on the device before it is stored and again on the server
/// before it is filed: no email, password, token, photo or exact position, and nothing large.
public enum AnalyticsPrivacy {
    /// Most properties an event carries.
    public static let maxProperties = 16
    /// Most characters (Unicode scalars) of a property key and of a text value.
    public static let maxKeyLength = 40
    public static let maxTextLength = 120
    /// Decimal places of `area`: three are about 110 m of latitude.
    static let areaDecimals = 3

    /// Words that name what an event must never carry, matched against each part of a key
    /// (`user_email`, `photoURL`, `lat`).
    static let forbiddenKeyParts: Set<String> = [
        "email", "mail", "password", "passwd", "pwd", "pass", "token", "secret", "bearer", "auth", "authorization",
        "cookie", "session_token", "photo", "image", "img", "picture", "avatar", "jpeg", "png",
        "latitude", "longitude", "lat", "lng", "lon", "long", "gps", "coordinate", "coordinates", "location", "position",
    ]

    /// A position rounded to about 100 m, as `"4.603,-74.066"`: put it under `AnalyticsKey.area`.
    public static func area(latitude: Double, longitude: Double) -> String {
        let scale = 1000.0
        let lat = (latitude * scale).rounded() / scale
        let lon = (longitude * scale).rounded() / scale
        return String(format: "%.3f,%.3f", lat, lon)
    }

    /// Why `event` may not be recorded, or nil when it may.
    public static func problem(name: String, properties: [String: SyncValue]) -> String? {
        if let problem = nameProblem(name) { return problem }
        if properties.count > maxProperties {
            return "an event carries at most \(maxProperties) properties, not \(properties.count)"
        }
        for key in properties.keys.sorted() {
            if let problem = keyProblem(key) { return problem }
            if let problem = valueProblem(properties[key]!, key: key) { return problem }
        }
        return nil
    }

    /// Names (of events, apps, platforms) are `snake_case` ASCII: a letter, then letters, digits and `_`.
    public static func nameProblem(_ name: String, what: String = "event name", maxLength: Int = 64) -> String? {
        let bytes = Array(name.utf8)
        guard (1...maxLength).contains(bytes.count), let first = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first),
              bytes.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") })
        else {
            return "\(what) must be 1 to \(maxLength) of a-z, 0-9 and _, starting with a letter: '\(name.prefix(40))'"
        }
        return nil
    }

    static func keyProblem(_ key: String) -> String? {
        if let problem = nameProblem(key, what: "property key", maxLength: maxKeyLength) { return problem }
        let parts = key.split(separator: "_").map(String.init)
        if parts.contains(where: forbiddenKeyParts.contains) || forbiddenKeyParts.contains(key) {
            return "property '\(key)' looks like an email, a password, a token, a photo or a position: events never carry those"
                + " (a position goes rounded under '\(AnalyticsKey.area)')"
        }
        return nil
    }

    static func valueProblem(_ value: SyncValue, key: String) -> String? {
        switch value {
        case .string(let text):
            if text.unicodeScalars.count > maxTextLength {
                return "property '\(key)' is longer than \(maxTextLength) characters"
            }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                return "property '\(key)' holds a control character"
            }
            if key == AnalyticsKey.area {
                return areaProblem(text)
            }
            if looksLikeEmail(text) { return "property '\(key)' looks like an email address: events never carry one" }
            if looksLikeSecret(text) { return "property '\(key)' looks like a token or encoded data: events never carry one" }
            return nil
        case .number(let number):
            return number.isFinite ? nil : "property '\(key)' is not a finite number"
        case .integer, .boolean:
            return nil
        case .null:
            return "property '\(key)' is null: leave it out instead"
        }
    }

    /// An area must be rounded: at most `areaDecimals` decimals on each side.
    static func areaProblem(_ text: String) -> String? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let rounded = parts.count == 2 && parts.allSatisfy { part in
            guard Double(part) != nil else { return false }
            let decimals = part.split(separator: ".", omittingEmptySubsequences: false)
            return decimals.count == 1 || decimals[1].count <= areaDecimals
        }
        return rounded ? nil : "property '\(AnalyticsKey.area)' must be a position rounded to about 100 m ('4.603,-74.066'): use AnalyticsPrivacy.area"
    }

    static func looksLikeEmail(_ text: String) -> Bool {
        guard let at = text.firstIndex(of: "@") else { return false }
        let local = text[..<at], domain = text[text.index(after: at)...]
        return !local.isEmpty && domain.contains(".") && !domain.contains(" ")
    }

    /// A long run of letters and digits without spaces (a bearer token, a JWT, base64 of a photo).
    static func looksLikeSecret(_ text: String) -> Bool {
        if text.hasPrefix("data:") || text.lowercased().hasPrefix("bearer ") { return true }
        var run = 0, longest = 0, digits = 0, letters = 0
        for scalar in text.unicodeScalars {
            let isDigit = ("0"..."9").contains(scalar)
            let isLetter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            if isDigit || isLetter || "+/=-_.".unicodeScalars.contains(scalar) {
                run += 1
                if isDigit { digits += 1 }
                if isLetter { letters += 1 }
                longest = max(longest, run)
            } else {
                run = 0
            }
        }
        // NB: ids (UUIDs, 36 characters with dashes) are fine; a token is longer, or mixes far more.
        return longest >= 40 && digits > 0 && letters > 0
    }
}

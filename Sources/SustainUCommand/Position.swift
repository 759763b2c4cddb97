import EventualAPI
import Recycling

/// A position typed as LATITUDE,LONGITUDE.
enum Position {
    /// The position, or a usage mistake quoting what was typed. NB: a negative pair arrives with
    /// a leading space (CommandLineSupport's NegativeCoordinates), which is not the person's.
    static func parse(_ text: String) throws -> GeoPosition {
        let typed = text.trimmingCharacters(in: .whitespaces)
        guard let position = GeoPosition(parsing: typed) else { throw RecyclingError.invalidPosition(typed) }
        return position
    }
}

/// Why an import of recycling points or packaging could not start.
public enum RecyclingImportError: Error, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case notGeoJSON(path: String, reason: String)
    case notPackagingCSV(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .notGeoJSON(let path, let reason): return "\(path) is not an OpenStreetMap GeoJSON export: \(reason)"
        case .notPackagingCSV(let path, let reason): return "\(path) is not an Open Food Facts packaging CSV: \(reason)"
        }
    }
}

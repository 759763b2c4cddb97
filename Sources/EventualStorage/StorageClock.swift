import Foundation

/// The time the storage layer writes (`schema_migrations.applied_at`) and its busy window count in.
///
/// NB: the same Unix milliseconds as EventualAPI's `UnixMillis`, which this target does not import:
/// it stays free of the contract and of HTTP.
enum StorageClock {
    /// Now in Unix milliseconds, rounded down.
    static func unixMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

// NB: the server's public API speaks of `Database` and `DatabaseLocation` (its configuration, its
// import commands), so whoever imports the server sees the storage types too.
@_exported import EventualStorage

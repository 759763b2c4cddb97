extension Array {
    /// The array cut into slices of at most `size`, in order: the rows or ids of one statement,
    /// well under SQLite's and PostgreSQL's limits on bound values.
    func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

import EventualAPI

extension GTIN {
    /// A barcode a person typed or scanned (spaces and dashes ignored), or `PantryError.invalidBarcode`.
    public init(scanned text: String) throws(PantryError) {
        do {
            try self.init(typed: text)
        } catch {
            throw .invalidBarcode(text)
        }
    }
}

import EventualAPI

extension GTIN {
    /// A barcode from a request: a GTIN, or a 400 that says what is wrong with it.
    init(validating raw: String) throws(APIError) {
        do {
            try self.init(raw)
        } catch {
            throw .badRequest(error.description)
        }
    }
}

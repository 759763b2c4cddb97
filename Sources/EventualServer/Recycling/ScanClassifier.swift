import EventualAPI
import Foundation
import Logging

/// What a scan is and which bin it goes in, from its barcode, its photo and where it was taken:
/// the packaging the catalogue knows for the barcode first, else the vision model on the photo,
/// else what can be said without either. An item for a special bin names the nearest point that
/// takes it.
struct ScanClassifier: Sendable {
    let products: ProductStore
    let packaging: PackagingCatalogue
    let points: RecyclingPointStore
    /// Nil when no vision model is configured: a photo alone is then refused (422).
    let vision: VisionClient?

    /// A photo's bytes and type.
    typealias Photo = (data: Data, mimeType: String)

    /// The classification of a scan; an APIError when the photo had to be classified and could
    /// not be (no model here, the model down, or an answer not understood).
    func classify(barcode gtin: GTIN?, photo: Photo?, at position: GeoPosition?) async throws -> ScanStore.Classification {
        let productName = try await gtin.asyncMap { try await products.name(gtin: $0.normalized) } ?? nil
        var classification: ScanStore.Classification
        if let gtin, let parts = try await packaging.parts(gtin: gtin.normalized), let type = TrashType(packaging: parts) {
            classification = .init(detected: true, trashType: type, parts: parts, source: .barcode,
                                   message: Self.packagingMessage(type, parts: parts, productName: productName))
        } else if let photo {
            classification = try await byVision(photo)
        } else {
            // NB: the barcode was found: "no item detected" would be wrong, only its packaging is unknown.
            let found = productName.map { "Found \($0), but its packaging is not known yet" } ?? "This product's packaging is not known yet"
            classification = .init(detected: false, source: Components.Schemas.ScanResult.SourcePayload.none,
                                   message: "\(found), so no bin can be named: scan it with a photo, or see the tips.")
        }
        classification.productName = productName
        try await nameNearestPoint(for: &classification, from: position)
        return classification
    }

    /// What the vision model sees in the photo.
    private func byVision(_ photo: Photo) async throws -> ScanStore.Classification {
        guard let vision else { throw APIError(.unprocessableContent, "This server cannot classify photos; scan the barcode instead") }
        let type: TrashType?
        do throws(VisionFailure) {
            type = try await vision.classify(photo: photo.data, mimeType: photo.mimeType)
        } catch {
            // NB: where the model is goes to the log for the operator, never into the answer.
            RequestScope.current?.logger.warning("vision model failed", metadata: [
                "error": "\(error)", "vision_endpoint": "\(vision.endpoint.host ?? "?"):\(vision.endpoint.port.map(String.init) ?? "default port")",
            ])
            switch error {
            case .unavailable(let reason):
                throw APIError(.serviceUnavailable, "The photo could not be classified right now: the vision model \(reason); send the scan again later",
                               retryAfter: 30)
            case .badAnswer(let reason):
                throw APIError(.badGateway, "The photo could not be classified: the vision model's answer was not understood (\(reason))")
            }
        }
        guard let type else {
            return .init(detected: false, source: .vision, message: "No item detected: no piece of trash was recognised in the photo.")
        }
        return .init(detected: true, trashType: type, source: .vision, message: "\(type.rawValue): \(type.bin.label).")
    }

    /// For an item that goes to a special point (batteries, electronics), the nearest that takes it.
    private func nameNearestPoint(for classification: inout ScanStore.Classification, from position: GeoPosition?) async throws {
        guard classification.detected, let type = classification.trashType, case .special(let material) = type.bin, let position else { return }
        if let nearest = try await points.nearest(to: position, limit: 1, material: material).first {
            classification.specialPoint = nearest.point.answer(visits: nearest.visits, distance: nearest.meters)
            let place = nearest.point.name ?? "the recycling point \(nearest.point.id)"
            classification.message += " The nearest is \(place), \(Int(nearest.meters.rounded())) m away."
        } else {
            classification.message += " No recycling point accepting \(material.rawValue) is known here."
        }
    }

    /// What a scan classified by its packaging says: one part, "Glass Bottle, by its packaging
    /// (glass (bottle)): the blue bin (…)."; several, each part's bin.
    static func packagingMessage(_ type: TrashType, parts: [PackagingPart], productName: String?) -> String {
        func name(_ part: PackagingPart) -> String { part.shape.map { "\(part.material.rawValue) (\($0))" } ?? part.material.rawValue }
        let what = productName.map { "\($0): " } ?? ""
        guard parts.count > 1 else { return "\(what)\(type.rawValue), by its packaging (\(parts.map(name).joined(separator: ", "))): \(type.bin.label)." }
        let each = parts.map { "\(name($0)) in \($0.trashType.bin.label)" }.joined(separator: "; ")
        return "\(what)\(type.rawValue), by its packaging, in \(parts.count) parts: \(each)."
    }
}

extension Optional {
    /// `map` for an async transform.
    fileprivate func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async rethrows -> Mapped? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

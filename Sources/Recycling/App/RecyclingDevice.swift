import EventualAPI
import EventualKit
import Foundation

extension DeviceApp {
    /// SustainU to the device layer: its tables, and its words for what waits in the outbox.
    static let sustainU = DeviceApp(.sustainU, version: UserRecycling.version,
                                    migrations: RecyclingSchema.migrations) { entry, _ in
        if entry.operation == ScanCalls.scan, let call = try? JSONDecoder().decode(ScanCall.self, from: entry.payload) {
            let what = call.photoFile != nil || call.photoAttachment != nil ? "photo" : "barcode \((try? GTIN(call.barcode ?? "").shortForm) ?? call.barcode ?? "")"
            return "scan of a \(what)"
        } else if entry.operation == ScanCalls.visit, let call = try? JSONDecoder().decode(VisitCall.self, from: entry.payload) {
            return "visit to \(call.pointId)"
        }
        return entry.operation
    }
}

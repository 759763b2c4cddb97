import EventualAPI
import Foundation

extension SyncWire {
    /// `{"changes":[…]}` for a batch of change entries (`openapi.yaml`'s `SyncPushRequest`).
    ///
    /// NB: written by hand so that a change goes on the wire as the outbox stored it, spliced after
    /// its id, collection and record id: the generated client would decode each payload and wrap its
    /// fields in `OpenAPIObjectContainer`s, then encode them again.
    static func pushBody(_ batch: [OutboxEntry], seen: [String] = [], app: EventualApp? = nil) -> Data {
        var body = Data(#"{"changes":["#.utf8)
        body.reserveCapacity(batch.reduce(32) { $0 + $1.payload.count + 120 })
        for (index, entry) in batch.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"id":"#.utf8)
            WireJSON.appendString(entry.id, to: &body)
            body.append(contentsOf: #","collection":"#.utf8)
            WireJSON.appendString(entry.operation, to: &body)
            body.append(contentsOf: #","recordId":"#.utf8)
            WireJSON.appendString(entry.recordID ?? "", to: &body)
            if let space = entry.space {
                // NB: absent for the person's own space: what a device sent before spaces, byte for byte.
                body.append(contentsOf: #","space":"#.utf8)
                WireJSON.appendString(space, to: &body)
            }
            // NB: the payload is a JSON object written by `ChangePayload`'s encoder: its members follow.
            body.append(UInt8(ascii: ","))
            body.append(entry.payload.dropFirst())
        }
        body.append(UInt8(ascii: "]"))
        if let app {
            body.append(contentsOf: #","app":{"id":"#.utf8)
            WireJSON.appendString(app.id.rawValue, to: &body)
            body.append(contentsOf: #","version":\#(app.version)}"#.utf8)
        }
        if !seen.isEmpty {
            // NB: tags are base64url, nothing to escape.
            body.append(contentsOf: #","seen":["#.utf8)
            body.append(contentsOf: seen.map { "\"\($0)\"" }.joined(separator: ",").utf8)
            body.append(UInt8(ascii: "]"))
        }
        body.append(UInt8(ascii: "}"))
        return body
    }
}

extension SyncWire {
    /// What `pushBody` takes around a batch's changes: `{"changes":[` and `]}`.
    static let pushBodyEnvelope = 15

    /// What `pushBody` takes to name `app`: at most this many bytes more than the envelope.
    static func pushBytes(naming app: EventualApp?) -> Int {
        guard let app else { return 0 }
        return 30 + WireJSON.stringLength(app.id.rawValue) + String(app.version).utf8.count
    }

    /// The bytes a change entry takes in `pushBody`, its separating comma included: what a batch
    /// claims, so that a push never grows past the bytes it was allowed (and a server's body limit).
    static func pushBytes(of entry: OutboxEntry) -> Int {
        // NB: `{"id":`, `,"collection":`, `,"recordId":`, the `,` before the payload's members and one between changes.
        var bytes = 6 + 14 + 12 + 1 + 1 + entry.payload.count - 1
        bytes += WireJSON.stringLength(entry.id) + WireJSON.stringLength(entry.operation) + WireJSON.stringLength(entry.recordID ?? "")
        if let space = entry.space { bytes += 9 + WireJSON.stringLength(space) }
        return bytes
    }
}

extension SyncWire.PulledRecord {
    /// The record, with no space when it is in `personalSpace`.
    func remote(personalSpace: String?) -> RemoteRecord {
        var record = RemoteRecord(collection: collection, recordID: recordId, fields: fields, deleted: deleted, hlc: hlc,
                                  space: space == personalSpace ? nil : space, changedBy: changedBy)
        record.state = state
        return record
    }
}

import Foundation
import OpenAPIRuntime

/// The sync endpoints' bodies as values, one definition for the engine and the server: the engine
/// reads them straight from JSON without the generated client's generic containers, the server
/// writes them through the generated types (`Components.Schemas.…(_:)`).
///
/// NB: the hot path of a phone leaving a basement with thousands of changes: a pulled record's
/// fields decode straight into `SyncValue`s, and the engine's push body splices each change as
/// its outbox stored it (EventualKit's `SyncWire.pushBody`). The shapes are `openapi.yaml`'s
/// `SyncPullResponse`, `SyncRecordList` and `SyncPushResponse`; `SyncWireContractTests` holds
/// them to the generated types both ways.
public enum SyncWire {
    /// A pull's page (`SyncPullResponse`).
    public struct PulledPage: Decodable, Sendable {
        public let changes: [PulledRecord]
        public let cursor: String
        public let hasMore: Bool
        /// Every space the person is in. NB: absent from a server that predates spaces: the
        /// engine then keeps the spaces it knows.
        public let spaces: [SpaceSummary]?
        /// Spaces the person was in at the cursor and is no longer in.
        public let removed: [SpaceRef]?
        /// With `count=true`: how many records the subscription has still to send after this page.
        public let remaining: Int?
        /// The newest commit of each of the person's spaces (`SyncHistory`); absent from an older server.
        public let heads: [SyncHead]?
        /// Of the tags the pull named in `seen`, those the server lost: it was restored since.
        public let rewound: [String]?

        public init(changes: [PulledRecord], cursor: String, hasMore: Bool, spaces: [SpaceSummary]?, removed: [SpaceRef]?,
                    remaining: Int? = nil, heads: [SyncHead]? = nil, rewound: [String]? = nil) {
            self.changes = changes
            self.cursor = cursor
            self.hasMore = hasMore
            self.spaces = spaces
            self.removed = removed
            self.remaining = remaining
            self.heads = heads
            self.rewound = rewound
        }

        /// The person's own space, whose records the engine keeps with no space id.
        public var personalSpace: String? { spaces?.first { $0.kind == .personal }?.id }
    }

    /// A record as a pull, a look-up by id and a rule's refusal carry it (`SyncRecord`).
    public struct PulledRecord: Codable, Sendable, Equatable {
        public let collection: String
        public let recordId: String
        public let fields: [String: SyncValue]
        public let deleted: Bool
        /// The newest stamp the record holds.
        public let hlc: String
        public let space: String?
        /// The username of the person whose change the server applied last.
        public let changedBy: String?
        /// Its merge state (`MergeState.text`); absent from an older server.
        public let state: String?

        public init(collection: String, recordId: String, fields: [String: SyncValue], deleted: Bool, hlc: String, space: String?,
                    changedBy: String?, state: String? = nil) {
            self.state = state
            self.collection = collection
            self.recordId = recordId
            self.fields = fields
            self.deleted = deleted
            self.hlc = hlc
            self.space = space
            self.changedBy = changedBy
        }
    }

    /// `GET /v1/sync/records`'s answer (`SyncRecordList`).
    public struct RecordList: Decodable, Sendable {
        public let records: [PulledRecord]

        public init(records: [PulledRecord]) {
            self.records = records
        }
    }

    /// A push's answer: one result per change (`SyncPushResponse`).
    public struct PushAnswer: Decodable, Sendable {
        public let results: [PushResult]
        /// The newest commit of each space the push wrote to (`SyncHistory`); absent from an older server.
        public let heads: [SyncHead]?
        /// Of the tags the push named in `seen`, those the server lost: it was restored since.
        public let rewound: [String]?

        public init(results: [PushResult], heads: [SyncHead]? = nil, rewound: [String]? = nil) {
            self.results = results
            self.heads = heads
            self.rewound = rewound
        }
    }

    /// What became of one change (`SyncResult`).
    public struct PushResult: Decodable, Sendable, Equatable {
        public enum Status: String, Decodable, Sendable { case applied, duplicate, rejected }

        public let id: String
        public let status: Status
        public let message: String?
        /// A rule's refusal: its code (`below_minimum`, …) and the field it is about.
        public let code: String?
        public let field: String?
        /// The server's record when it refused the change by a rule; absent when it holds none.
        public let current: PulledRecord?

        public init(id: String, status: Status, message: String? = nil, code: String? = nil, field: String? = nil,
                    current: PulledRecord? = nil) {
            self.id = id
            self.status = status
            self.message = message
            self.code = code
            self.field = field
            self.current = current
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            status = try container.decode(Status.self, forKey: .status)
            message = try container.decodeIfPresent(String.self, forKey: .message)
            // NB: what a refusal adds is read leniently: an answer whose extras this version cannot
            // read still settles every change of the batch.
            code = try? container.decodeIfPresent(String.self, forKey: .code)
            field = try? container.decodeIfPresent(String.self, forKey: .field)
            current = try? container.decodeIfPresent(PulledRecord.self, forKey: .current)
        }

        private enum CodingKeys: String, CodingKey { case id, status, message, code, field, current }
    }
}

// MARK: As the generated server writes them

extension Components.Schemas.SyncRecord {
    public init(_ record: SyncWire.PulledRecord) throws {
        self.init(collection: record.collection, recordId: record.recordId,
                  fields: .init(additionalProperties: try OpenAPIObjectContainer(unvalidatedValue: record.fields.mapValues(\.anyValue))),
                  deleted: record.deleted, hlc: record.hlc, space: record.space ?? "", changedBy: record.changedBy, state: record.state)
    }
}

extension Components.Schemas.SyncPullResponse {
    public init(_ page: SyncWire.PulledPage) throws {
        self.init(changes: try page.changes.map(Components.Schemas.SyncRecord.init), cursor: page.cursor, hasMore: page.hasMore,
                  spaces: (page.spaces ?? []).map(Components.Schemas.SpaceSummary.init),
                  removed: (page.removed ?? []).map(Components.Schemas.SpaceRef.init), remaining: page.remaining,
                  heads: page.heads.map { $0.map(Components.Schemas.SyncHead.init) }, rewound: page.rewound)
    }
}

extension Components.Schemas.SyncRecordList {
    public init(_ list: SyncWire.RecordList) throws {
        self.init(records: try list.records.map(Components.Schemas.SyncRecord.init))
    }
}

extension Components.Schemas.SyncResult {
    public init(_ result: SyncWire.PushResult) throws {
        let status: Components.Schemas.SyncResult.StatusPayload = switch result.status {
        case .applied: .applied
        case .duplicate: .duplicate
        case .rejected: .rejected
        }
        self.init(id: result.id, status: status, message: result.message, code: result.code, field: result.field,
                  current: try result.current.map(Components.Schemas.SyncRecord.init))
    }
}

extension Components.Schemas.SyncPushResponse {
    public init(_ answer: SyncWire.PushAnswer) throws {
        self.init(results: try answer.results.map(Components.Schemas.SyncResult.init),
                  heads: answer.heads.map { $0.map(Components.Schemas.SyncHead.init) }, rewound: answer.rewound)
    }
}

extension Components.Schemas.SyncHead {
    public init(_ head: SyncHead) {
        self.init(space: head.space, seq: Int(head.seq), tag: head.tag)
    }
}

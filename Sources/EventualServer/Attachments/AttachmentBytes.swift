import EventualStorage
import NIOCore
import SQLKit

/// The bytes of a blob as a download sends them: each chunk is read from the database only when
/// the one before has been handed on, so a slow client holds one chunk in memory, not the blob.
struct AttachmentBytes: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    /// The part of one stored chunk to send.
    struct Piece: Sendable, Equatable {
        /// The chunk's `byte_offset`.
        let chunkOffset: Int64
        /// Bytes of the chunk before the part (a range starting inside it).
        let skip: Int
        /// Bytes of the part.
        let take: Int
    }

    let database: Database
    let space: String
    let sha256: String
    let pieces: [Piece]

    /// How many bytes the pieces add up to (the body's Content-Length).
    var count: Int64 { pieces.reduce(0) { $0 + Int64($1.take) } }

    func makeAsyncIterator() -> Iterator {
        Iterator(bytes: self)
    }

    struct Iterator: AsyncIteratorProtocol {
        let bytes: AttachmentBytes
        var next = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard next < bytes.pieces.count else { return nil }
            let piece = bytes.pieces[next]
            next += 1
            let (space, sha256) = (bytes.space, bytes.sha256)
            let data = try await bytes.database.withConnection { sql in
                try await sql.select().column("data").from("attachment_chunks")
                    .where("space_id", .equal, space).where("sha256", .equal, sha256).where("byte_offset", .equal, piece.chunkOffset)
                    .first()?.decode(column: "data", as: ByteBuffer.self)
            }
            // NB: deleted while it was being sent (housekeeping, or its space's owner left it): the
            // connection ends short of its Content-Length, and the client sees a cut download.
            guard let data, data.readableBytes >= piece.skip + piece.take else { throw AttachmentVanished() }
            return ArraySlice(data.readableBytesView.dropFirst(piece.skip).prefix(piece.take))
        }
    }
}

/// A blob's chunk went while its download was under way.
struct AttachmentVanished: Error {}

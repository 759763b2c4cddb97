import Foundation
import Testing
import BarcodeImages
import EventualTestSupport

@Suite("Reading a barcode from a photo with libzbar", .timeLimit(.minutes(2)))
struct BarcodeReaderTests {
    @Test func eanThirteenIsReadFromAPicture() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Given a picture of an EAN-13
        let photo = scratch.url.appendingPathComponent("label.pgm")
        try EAN13Drawing.pgm(Barcodes.milk).write(to: photo)
        // When it is read
        let codes = try await BarcodeReader().read(contentsOf: photo)
        // Then the number comes out
        #expect(codes == [Barcodes.milk])
    }

    @Test func pictureWithoutABarcodeSaysSo() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let photo = scratch.url.appendingPathComponent("wall.pgm")
        try EAN13Drawing.blank().write(to: photo)
        await #expect(throws: ScanError.noBarcode(photo.path)) { try await BarcodeReader().read(contentsOf: photo) }
    }

    @Test func fileThatIsNotAnImageIsRefused() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let file = scratch.url.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: file)
        await #expect(throws: ScanError.unsupportedFormat(file.path)) { try await BarcodeReader().read(contentsOf: file) }
    }
}

@Suite("Reading barcodes from JPEG and PNG photos", .timeLimit(.minutes(2)))
struct PhotoFormatTests {
    /// The EAN-13 of `code` as grey pixels.
    func label(_ code: String, in scratch: ScratchFolder) throws -> GreyImage {
        let pgm = scratch.url.appendingPathComponent("label-\(code).pgm")
        try EAN13Drawing.pgm(code).write(to: pgm)
        return try GreyImage(contentsOf: pgm)
    }

    @Test func eanThirteenIsReadFromAJPEG() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        // Given a phone photo of a label: a JPEG, with its compression artefacts
        let photo = scratch.url.appendingPathComponent("label.jpg")
        try label(Barcodes.milk, in: scratch).jpeg(quality: 75).write(to: photo)
        // When it is read
        let codes = try await BarcodeReader().read(contentsOf: photo)
        // Then the number comes out
        #expect(codes == [Barcodes.milk])
    }

    @Test func eanThirteenIsReadFromAPNG() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let photo = scratch.url.appendingPathComponent("label.png")
        try label(Barcodes.coffee, in: scratch).png().write(to: photo)
        #expect(try await BarcodeReader().read(contentsOf: photo) == [Barcodes.coffee])
    }

    @Test func damagedJPEGIsRefusedWithAReason() async throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let photo = scratch.url.appendingPathComponent("broken.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x02]).write(to: photo)
        await #expect {
            try await BarcodeReader().read(contentsOf: photo)
        } throws: { error in
            guard case ScanError.unreadable(let path, let reason) = error else { return false }
            return path == photo.path && reason.contains("JPEG")
        }
    }
}

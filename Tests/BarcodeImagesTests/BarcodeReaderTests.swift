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

import CJPEG
import CPNG
import Foundation

/// An image as 8-bit grey pixels, row by row: what zbar reads.
public struct GreyImage: Sendable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height, "one byte per pixel")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The most pixels a photo may have: beyond, it is not a photo of a label (and would take
    /// gigabytes to decode).
    static let maxPixels = 100_000_000

    /// Decodes a JPEG (with libjpeg), a PNG (with libpng) or a binary PGM/PPM (`P5`/`P6`) file.
    public init(contentsOf url: URL) throws(ScanError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw .unreadable(url.path, Self.reason(error)) }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = try Self.jpeg(data, path: url.path)
        } else if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            self = try Self.png(data, path: url.path)
        } else if data.starts(with: [0x50, 0x35]) || data.starts(with: [0x50, 0x36]) {
            self = try Self.netpbm(data, path: url.path)
        } else {
            throw .unsupportedFormat(url.path)
        }
    }

    /// Why a file could not be read, in a few words.
    private static func reason(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileNoSuchFile?, .fileReadNoSuchFile?: return "there is no such file"
        case .fileReadNoPermission?: return "permission denied"
        default: return "cannot read the file"
        }
    }

    private static func jpeg(_ data: Data, path: String) throws(ScanError) -> GreyImage {
        var pixels: UnsafeMutablePointer<UInt8>?
        var width: Int32 = 0, height: Int32 = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let failed = data.withUnsafeBytes { bytes in
            cjpeg_decode_grey(bytes.bindMemory(to: UInt8.self).baseAddress, UInt(bytes.count), UInt(maxPixels),
                              &pixels, &width, &height, &message)
        }
        defer { free(pixels) }
        guard failed == 0, let pixels else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .unreadable(path, reason.isEmpty ? "not a valid JPEG" : "not a valid JPEG (\(reason))")
        }
        let count = Int(width) * Int(height)
        return GreyImage(width: Int(width), height: Int(height), pixels: [UInt8](UnsafeBufferPointer(start: pixels, count: count)))
    }

    private static func png(_ data: Data, path: String) throws(ScanError) -> GreyImage {
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        let ok = data.withUnsafeBytes { bytes in
            png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count)
        }
        guard ok != 0 else { throw .unreadable(path, "not a valid PNG") }
        image.format = png_uint_32(PNG_FORMAT_GRAY)
        let width = Int(image.width), height = Int(image.height)
        guard width > 0, height > 0, width * height <= maxPixels else {
            png_image_free(&image)
            throw .unreadable(path, "the image is too large")
        }
        var pixels = [UInt8](repeating: 0, count: width * height)
        let finished = data.withUnsafeBytes { _ in
            pixels.withUnsafeMutableBytes { out in png_image_finish_read(&image, nil, out.baseAddress, png_int_32(width), nil) }
        }
        png_image_free(&image)
        guard finished != 0 else { throw .unreadable(path, "the PNG data is damaged") }
        return GreyImage(width: width, height: height, pixels: pixels)
    }

    /// Binary PGM (P5) or PPM (P6) with a maximum value below 256.
    private static func netpbm(_ data: Data, path: String) throws(ScanError) -> GreyImage {
        let bytes = [UInt8](data)
        var index = 2
        func nextNumber() -> Int? {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                } else if bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
                    index += 1
                } else { break }
            }
            var value = 0, digits = 0
            while index < bytes.count, (0x30...0x39).contains(bytes[index]), digits < 9 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        let channels = bytes[1] == UInt8(ascii: "6") ? 3 : 1
        guard let width = nextNumber(), let height = nextNumber(), let maxValue = nextNumber(),
              width > 0, height > 0, (1...255).contains(maxValue), width * height <= maxPixels else {
            throw .unreadable(path, "not a valid PGM/PPM header")
        }
        index += 1
        guard bytes.count - index >= width * height * channels else { throw .unreadable(path, "the image data is cut short") }
        var pixels = [UInt8](repeating: 0, count: width * height)
        for pixel in 0..<(width * height) {
            let start = index + pixel * channels
            let sum = (0..<channels).reduce(0) { $0 + Int(bytes[start + $1]) }
            pixels[pixel] = UInt8(min(255, sum / channels * 255 / maxValue))
        }
        return GreyImage(width: width, height: height, pixels: pixels)
    }
}

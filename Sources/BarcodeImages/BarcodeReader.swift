import CZBar
import EventualAPI
import Foundation

/// Why a photo gave no barcode.
public enum ScanError: Error, Equatable, CustomStringConvertible {
    case unreadable(String, String)
    case unsupportedFormat(String)
    case noBarcode(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "Cannot read the image \(path): \(reason)"
        case .unsupportedFormat(let path): return "\(path) is not a JPEG, PNG or PGM/PPM image"
        case .noBarcode(let path): return "No barcode found in \(path): try a sharper, closer photo, or type the number"
        }
    }
}

/// Reads product barcodes (EAN-13, EAN-8, UPC-A/E) from a photo with libzbar: the Linux
/// stand-in for the phone's camera.
public struct BarcodeReader: Sendable {
    public init() {}

    /// The barcodes in the image file, in the order zbar found them.
    public func read(contentsOf url: URL) async throws -> [String] {
        // NB: decoding and scanning are CPU work: on a thread of their own, off Swift concurrency's few threads.
        try await offCooperativePool { () throws -> [String] in
            let codes = Self.decode(try GreyImage(contentsOf: url))
            guard !codes.isEmpty else { throw ScanError.noBarcode(url.path) }
            return codes
        }
    }

    /// The barcodes in grey pixels (synchronous; call it off the cooperative pool).
    public static func decode(_ image: GreyImage) -> [String] {
        guard let scanner = zbar_image_scanner_create() else { return [] }
        defer { zbar_image_scanner_destroy(scanner) }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 1)
        guard let zimage = zbar_image_create() else { return [] }
        defer { zbar_image_destroy(zimage) }
        zbar_image_set_format(zimage, fourcc("Y800"))
        zbar_image_set_size(zimage, UInt32(image.width), UInt32(image.height))
        return image.pixels.withUnsafeBytes { bytes -> [String] in
            // NB: zbar borrows the pixels (no cleanup handler); the image is destroyed before they go.
            zbar_image_set_data(zimage, bytes.baseAddress, UInt(bytes.count), nil)
            guard zbar_scan_image(scanner, zimage) > 0 else { return [] }
            var codes: [String] = []
            var symbol = zbar_image_first_symbol(zimage)
            while let current = symbol {
                if let data = zbar_symbol_get_data(current) { codes.append(String(cString: data)) }
                symbol = zbar_symbol_next(current)
            }
            zbar_image_set_data(zimage, nil, 0, nil)
            return codes
        }
    }

    private static func fourcc(_ text: String) -> UInt {
        text.utf8.enumerated().reduce(0) { $0 | (UInt($1.element) << (8 * UInt($1.offset))) }
    }
}

import CJPEG
import CPNG
import Foundation

/// Why grey pixels could not be encoded.
public struct EncodingError: Error, Equatable, CustomStringConvertible {
    public let description: String
}

extension GreyImage {
    /// The pixels as a PNG file: a photo for tests and tools.
    public func png() throws(EncodingError) -> Data {
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        image.width = png_uint_32(width)
        image.height = png_uint_32(height)
        image.format = png_uint_32(PNG_FORMAT_GRAY)
        var size = 0
        // NB: libpng's simplified API: a first call with no buffer says how large the file will be.
        let measured = pixels.withUnsafeBytes { bytes in
            png_image_write_to_memory(&image, nil, &size, 0, bytes.baseAddress, png_int_32(width), nil)
        }
        guard measured != 0, size > 0 else { throw EncodingError(description: "libpng cannot encode the image") }
        var data = Data(count: size)
        let written = data.withUnsafeMutableBytes { out in
            pixels.withUnsafeBytes { bytes in
                png_image_write_to_memory(&image, out.baseAddress, &size, 0, bytes.baseAddress, png_int_32(width), nil)
            }
        }
        png_image_free(&image)
        guard written != 0 else { throw EncodingError(description: "libpng cannot encode the image") }
        return data.prefix(size)
    }

    /// The pixels as a JPEG file of `quality` (1 to 100), as a phone would save a photo.
    public func jpeg(quality: Int = 85) throws(EncodingError) -> Data {
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let failed = pixels.withUnsafeBufferPointer { bytes in
            cjpeg_encode_grey(bytes.baseAddress, Int32(width), Int32(height), Int32(min(100, max(1, quality))), &buffer, &size, &message)
        }
        defer { free(buffer) }
        guard failed == 0, let buffer else {
            throw EncodingError(description: "libjpeg cannot encode the image: " + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return Data(bytes: buffer, count: Int(size))
    }
}

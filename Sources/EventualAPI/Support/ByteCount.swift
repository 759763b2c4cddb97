/// A size in bytes as a person reads it, the same on the device and on the server: "78 bytes",
/// "49 KiB", "4.8 MiB". Rounded up, so that a file over a limit never reads as the limit, and a
/// quota message that names a file the device named says the same number.
public enum ByteCount {
    public static func text(_ bytes: Int64) -> String {
        let sign = bytes < 0 ? "-" : ""
        let magnitude = bytes.magnitude
        let kibibyte: UInt64 = 1024, mebibyte: UInt64 = 1_048_576
        if magnitude < kibibyte { return "\(sign)\(magnitude) byte\(magnitude == 1 ? "" : "s")" }
        let kibibytes = magnitude / kibibyte + (magnitude % kibibyte == 0 ? 0 : 1)
        if kibibytes < kibibyte { return "\(sign)\(kibibytes) KiB" }
        // NB: the remainder's tenths, rounded up, computed apart: the whole size times ten overflows near Int64.max.
        var whole = magnitude / mebibyte
        var tenths = ((magnitude % mebibyte) * 10 + mebibyte - 1) / mebibyte
        if tenths == 10 { (whole, tenths) = (whole + 1, 0) }
        return "\(sign)\(whole).\(tenths) MiB"
    }
}

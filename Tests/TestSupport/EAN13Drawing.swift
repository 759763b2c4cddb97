import Foundation

/// Draws an EAN-13 barcode as grey pixels: what a photo of a product's label gives the reader.
public enum EAN13Drawing {
    private static let left: [String] = ["0001101", "0011001", "0010011", "0111101", "0100011",
                                         "0110001", "0101111", "0111011", "0110111", "0001011"]
    private static let parity: [String] = ["LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG",
                                           "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL"]

    /// The 95 modules (1 = bar) of a 13-digit code.
    public static func modules(_ code: String) -> [Bool] {
        let digits = code.compactMap(\.wholeNumberValue)
        precondition(digits.count == 13, "13 digits")
        var bits = "101"
        for (index, digit) in digits[1...6].enumerated() {
            let l = left[digit]
            if parity[digits[0]][parity[digits[0]].index(parity[digits[0]].startIndex, offsetBy: index)] == "L" {
                bits += l
            } else {
                // G code: the R code (complement of L) reversed.
                bits += String(l.map { $0 == "0" ? "1" : "0" }.reversed())
            }
        }
        bits += "01010"
        for digit in digits[7...12] { bits += String(left[digit].map { $0 == "0" ? "1" : "0" }) }
        bits += "101"
        return bits.map { $0 == "1" }
    }

    /// A binary PGM (P5) of the code: 3 pixels a module, a quiet zone, 80 pixels tall.
    public static func pgm(_ code: String, moduleWidth: Int = 3, height: Int = 80) -> Data {
        let quiet = 12
        let bars = modules(code)
        let width = (bars.count + 2 * quiet) * moduleWidth
        var row = [UInt8](repeating: 255, count: width)
        for (index, bar) in bars.enumerated() where bar {
            for x in 0..<moduleWidth { row[(quiet + index) * moduleWidth + x] = 0 }
        }
        var data = Data("P5\n\(width) \(height)\n255\n".utf8)
        for _ in 0..<height { data.append(contentsOf: row) }
        return data
    }

    /// A blank PGM: no barcode in it.
    public static func blank(width: Int = 200, height: Int = 80) -> Data {
        var data = Data("P5\n\(width) \(height)\n255\n".utf8)
        data.append(contentsOf: [UInt8](repeating: 230, count: width * height))
        return data
    }
}

/// Barcodes with valid check digits.
public enum Barcodes {
    public static let pasta = "8001120000002"
    public static let milk = "4006381333931"
    public static let coffee = "5000112548167"
    public static let beans = "0049000028911"
}

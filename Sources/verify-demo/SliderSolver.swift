import Foundation

/// Solves IDaaS's slider as a person does by eye: the piece's shape is slid over the background, and the
/// position where it covers the darkest area is the cut-out. Reads the PNGs itself (any 8-bit RGB or RGBA
/// PNG: zlib inflate with stored, fixed and dynamic Huffman blocks, and the five row filters), so the demo
/// needs no image library on Linux.
enum SliderSolver {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The x of the piece's left edge over the cut-out, in background pixels.
    static func solve(background: Data, piece: Data) throws -> Int {
        let background = try PNGImage(background)
        let piece = try PNGImage(piece)
        guard piece.channels == 4, piece.height == background.height, piece.width <= background.width else {
            throw Failure(description: "the piece must be an RGBA image as tall as the background")
        }
        var mask: [(x: Int, y: Int)] = []
        for y in 0..<piece.height {
            for x in 0..<piece.width where piece.component(x, y, 3) > 0 { mask.append((x, y)) }
        }
        var luminance = [Int](repeating: 0, count: background.width * background.height)
        for y in 0..<background.height {
            for x in 0..<background.width {
                luminance[y * background.width + x] =
                    Int(background.component(x, y, 0)) + Int(background.component(x, y, 1))
                    + Int(background.component(x, y, 2))
            }
        }
        var best = (left: 0, sum: Int.max)
        for left in 0...(background.width - piece.width) {
            var sum = 0
            for point in mask { sum += luminance[point.y * background.width + left + point.x] }
            if sum < best.sum { best = (left, sum) }
        }
        return best.left
    }
}

/// An 8-bit RGB or RGBA PNG, decoded.
struct PNGImage {
    let width: Int
    let height: Int
    let channels: Int
    private let pixels: [UInt8]

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw SliderSolver.Failure(description: "not a PNG")
        }
        var offset = 8
        var (width, height, channels) = (0, 0, 0)
        var compressed: [UInt8] = []
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let kind = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard offset + 12 + length <= bytes.count else { throw SliderSolver.Failure(description: "truncated PNG") }
            let body = bytes[offset + 8..<offset + 8 + length]
            switch kind {
            case "IHDR":
                let field = { (at: Int) in
                    Int(body[body.startIndex + at..<body.startIndex + at + 4].reduce(0) { $0 << 8 | Int($1) })
                }
                (width, height) = (field(0), field(4))
                let depth = body[body.startIndex + 8]
                let color = body[body.startIndex + 9]
                guard depth == 8, color == 2 || color == 6 else {
                    throw SliderSolver.Failure(description: "only 8-bit RGB or RGBA PNGs")
                }
                channels = color == 6 ? 4 : 3
            case "IDAT": compressed += body
            default: break
            }
            offset += 12 + length
        }
        guard width > 0, height > 0, !compressed.isEmpty else { throw SliderSolver.Failure(description: "no image") }
        let raw = try Inflater.zlib(compressed)
        let stride = width * channels
        guard raw.count >= height * (stride + 1) else { throw SliderSolver.Failure(description: "short image data") }
        var pixels = [UInt8](repeating: 0, count: height * stride)
        for y in 0..<height {
            let filter = raw[y * (stride + 1)]
            let line = y * (stride + 1) + 1
            for i in 0..<stride {
                let left = i >= channels ? Int(pixels[y * stride + i - channels]) : 0
                let up = y > 0 ? Int(pixels[(y - 1) * stride + i]) : 0
                let corner = (i >= channels && y > 0) ? Int(pixels[(y - 1) * stride + i - channels]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let p = left + up - corner
                    let (pa, pb, pc) = (abs(p - left), abs(p - up), abs(p - corner))
                    predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : corner
                default: throw SliderSolver.Failure(description: "unknown PNG filter \(filter)")
                }
                pixels[y * stride + i] = UInt8((Int(raw[line + i]) + predictor) & 0xFF)
            }
        }
        (self.width, self.height, self.channels, self.pixels) = (width, height, channels, pixels)
    }

    /// Channel `channel` (0 red, 1 green, 2 blue, 3 alpha) of the pixel at (x, y).
    func component(_ x: Int, _ y: Int, _ channel: Int) -> UInt8 {
        pixels[(y * width + x) * channels + channel]
    }
}

/// RFC 1950/1951 decompression: stored, fixed-Huffman and dynamic-Huffman blocks.
enum Inflater {
    static func zlib(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count > 6, data[0] & 0x0F == 8, (Int(data[0]) << 8 | Int(data[1])) % 31 == 0 else {
            throw SliderSolver.Failure(description: "not a zlib stream")
        }
        return try inflate(Array(data[2...]))
    }

    private struct Bits {
        let bytes: [UInt8]
        var position = 0  // in bits

        mutating func read(_ count: Int) throws -> Int {
            var value = 0
            for i in 0..<count {
                let byte = position >> 3
                guard byte < bytes.count else { throw SliderSolver.Failure(description: "deflate data ends early") }
                value |= Int((bytes[byte] >> UInt8(position & 7)) & 1) << i
                position += 1
            }
            return value
        }

        mutating func alignToByte() { position = (position + 7) & ~7 }
    }

    /// A canonical Huffman code: counts per length and the symbols in code order.
    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<16 { offsets[length] = offsets[length - 1] + counts[length - 1] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length > 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        func decode(_ bits: inout Bits) throws -> Int {
            var (code, first, index) = (0, 0, 0)
            for length in 1..<16 {
                code |= try bits.read(1)
                let count = counts[length]
                if code - count < first { return symbols[index + (code - first)] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw SliderSolver.Failure(description: "bad Huffman code")
        }
    }

    private static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    private static let lengthExtra = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ]
    private static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    private static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]

    static func inflate(_ data: [UInt8]) throws -> [UInt8] {
        var bits = Bits(bytes: data)
        var output: [UInt8] = []
        var last = false
        while !last {
            last = try bits.read(1) == 1
            switch try bits.read(2) {
            case 0:
                bits.alignToByte()
                let start = bits.position >> 3
                guard start + 4 <= data.count else {
                    throw SliderSolver.Failure(description: "stored block ends early")
                }
                let length = Int(data[start]) | Int(data[start + 1]) << 8
                guard start + 4 + length <= data.count else {
                    throw SliderSolver.Failure(description: "stored block ends early")
                }
                output += data[start + 4..<start + 4 + length]
                bits.position = (start + 4 + length) << 3
            case 1:
                let literal = Huffman(lengths: (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 })
                let distance = Huffman(lengths: [Int](repeating: 5, count: 30))
                try inflateBlock(&bits, &output, literal, distance)
            case 2:
                let literalCount = try bits.read(5) + 257
                let distanceCount = try bits.read(5) + 1
                let codeLengthCount = try bits.read(4) + 4
                let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
                var codeLengths = [Int](repeating: 0, count: 19)
                for i in 0..<codeLengthCount { codeLengths[order[i]] = try bits.read(3) }
                let codeLengthCode = Huffman(lengths: codeLengths)
                var lengths: [Int] = []
                while lengths.count < literalCount + distanceCount {
                    let symbol = try codeLengthCode.decode(&bits)
                    switch symbol {
                    case 0..<16: lengths.append(symbol)
                    case 16:
                        guard let previous = lengths.last else { throw SliderSolver.Failure(description: "bad repeat") }
                        lengths += [Int](repeating: previous, count: 3 + (try bits.read(2)))
                    case 17: lengths += [Int](repeating: 0, count: 3 + (try bits.read(3)))
                    default: lengths += [Int](repeating: 0, count: 11 + (try bits.read(7)))
                    }
                }
                let literal = Huffman(lengths: Array(lengths[0..<literalCount]))
                let distance = Huffman(lengths: Array(lengths[literalCount..<literalCount + distanceCount]))
                try inflateBlock(&bits, &output, literal, distance)
            default:
                throw SliderSolver.Failure(description: "reserved deflate block type")
            }
        }
        return output
    }

    private static func inflateBlock(
        _ bits: inout Bits, _ output: inout [UInt8], _ literal: Huffman, _ distance: Huffman
    ) throws {
        while true {
            let symbol = try literal.decode(&bits)
            if symbol < 256 {
                output.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let index = symbol - 257
                guard index < lengthBase.count else { throw SliderSolver.Failure(description: "bad length") }
                let length = lengthBase[index] + (try bits.read(lengthExtra[index]))
                let distanceSymbol = try distance.decode(&bits)
                guard distanceSymbol < distanceBase.count else {
                    throw SliderSolver.Failure(description: "bad distance")
                }
                let back = distanceBase[distanceSymbol] + (try bits.read(distanceExtra[distanceSymbol]))
                guard back <= output.count else { throw SliderSolver.Failure(description: "distance too far") }
                for _ in 0..<length { output.append(output[output.count - back]) }
            }
        }
    }
}

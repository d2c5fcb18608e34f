import Foundation

/// The slider puzzle the IDaaS emulator draws: a textured background PNG with a darkened cut-out at a random
/// position, and the matching piece as a transparent PNG as tall as the background (so the piece's height on screen
/// is its height in the background), as AJ-Captcha style sliders ship them (docs/vendors/idaas.md §2.1
/// `originalImageBase64`, `jigsawImageBase64`). The answer is the cut-out's left edge, in background pixels.
struct IDaaSPuzzle: Sendable {
    static let width = 310
    static let height = 155
    /// The square body of the piece; a round knob sticks out on its right and top.
    static let body = 40
    static let knob = 7
    static let pieceWidth = body + knob + 2

    /// The cut-out's left edge and top, in background pixels.
    let x: Int
    let y: Int
    let background: Data
    let piece: Data

    /// Draws a new puzzle with the cut-out at a random place.
    init() {
        var rng = SystemRandomNumberGenerator()
        let x = Int.random(in: (Self.pieceWidth + 10)...(Self.width - Self.pieceWidth - 4), using: &rng)
        let y = Int.random(in: (Self.knob + 4)...(Self.height - Self.body - 4), using: &rng)
        self.init(x: x, y: y, seed: UInt64.random(in: 1...UInt64.max, using: &rng))
    }

    /// Draws the puzzle with the cut-out at `x`, `y` and the texture of `seed` (tests).
    init(x: Int, y: Int, seed: UInt64) {
        self.x = x
        self.y = y
        let w = Self.width
        let h = Self.height
        // The texture: soft colour waves plus noise, so the cut-out is not findable by colour alone.
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        var state = seed
        let phase = Double(seed % 628) / 100
        for row in 0..<h {
            for column in 0..<w {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double((state >> 33) % 41) - 20
                let (fx, fy) = (Double(column), Double(row))
                let r = 165 + 55 * sin(fx / 23 + phase) + 20 * cos(fy / 11) + noise
                let g = 150 + 50 * sin(fy / 17 + fx / 41 + phase) + noise
                let b = 160 + 60 * cos(fx / 31 - fy / 29) + noise
                let index = (row * w + column) * 3
                pixels.replaceSubrange(index..<(index + 3), with: [r, g, b].map(Self.clamp))
            }
        }
        // The piece: the texture under the shape, with a light outline; the cut-out: the same shape, darkened, with a
        // faint outline.
        let pw = Self.pieceWidth
        var piece = [UInt8](repeating: 0, count: pw * h * 4)
        for row in 0..<h {
            for column in 0..<pw where Self.inside(column, row - y) {
                let source = (row * w + x + column) * 3
                let target = (row * pw + column) * 4
                let edge = Self.isEdge(column, row - y)
                for channel in 0..<3 {
                    let value = Double(pixels[source + channel])
                    piece[target + channel] = edge ? 250 : pixels[source + channel]
                    pixels[source + channel] = edge ? Self.clamp(value * 0.6 + 80) : Self.clamp(value * 0.35)
                }
                piece[target + 3] = 255
            }
        }
        background = IDaaSPNG.encode(width: w, height: h, pixels: pixels, alpha: false)
        self.piece = IDaaSPNG.encode(width: pw, height: h, pixels: piece, alpha: true)
    }

    /// Whether the piece covers (`column`, `row`) of its own box, where row 0 is the top of the square body.
    static func inside(_ column: Int, _ row: Int) -> Bool {
        func onKnob(_ dx: Int, _ dy: Int) -> Bool { dx * dx + dy * dy <= knob * knob }
        return ((0..<body).contains(column) && (0..<body).contains(row))
            || (column >= body && onKnob(column - body, row - body / 2))  // the right knob, centred on the right side
            || (row < 0 && onKnob(column - body / 2, row))  // the top knob, centred on the top side
    }

    static func isEdge(_ column: Int, _ row: Int) -> Bool {
        !(inside(column - 1, row) && inside(column + 1, row) && inside(column, row - 1) && inside(column, row + 1))
    }

    static func clamp(_ value: Double) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
}

/// A minimal PNG encoder: 8-bit RGB or RGBA, no filtering, the image data in a zlib stream of stored
/// (uncompressed) deflate blocks, with CRC-32 and Adler-32 as the format requires. Any PNG decoder reads it.
enum IDaaSPNG {
    static func encode(width: Int, height: Int, pixels: [UInt8], alpha: Bool) -> Data {
        let channels = alpha ? 4 : 3
        var raw = [UInt8]()
        raw.reserveCapacity(height * (width * channels + 1))
        for row in 0..<height {
            raw.append(0)  // filter type None
            raw.append(contentsOf: pixels[(row * width * channels)..<((row + 1) * width * channels)])
        }
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, alpha ? 6 : 2, 0, 0, 0]
        png.append(chunk("IHDR", header))
        png.append(chunk("IDAT", zlibStored(raw)))
        png.append(chunk("IEND", []))
        return png
    }

    /// A zlib stream (RFC 1950) whose deflate data (RFC 1951) is stored blocks of at most 65535 bytes.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65535, data.count - offset)
            let final = offset + length >= data.count
            out.append(final ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8)]
            let inverse = ~UInt16(length)
            out += [UInt8(inverse & 0xFF), UInt8(inverse >> 8)]
            out += data[offset..<(offset + length)]
            offset += length
        } while offset < data.count
        out += bigEndian(adler32(data))
        return out
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> Data {
        let typeBytes = Array(type.utf8)
        var out = Data(bigEndian(UInt32(data.count)))
        out.append(contentsOf: typeBytes)
        out.append(contentsOf: data)
        out.append(contentsOf: bigEndian(crc32(typeBytes + data)))
        return out
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for chunkStart in stride(from: 0, to: bytes.count, by: 5552) {
            for byte in bytes[chunkStart..<min(bytes.count, chunkStart + 5552)] {
                a += UInt32(byte)
                b += a
            }
            a %= 65521
            b %= 65521
        }
        return (b << 16) | a
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

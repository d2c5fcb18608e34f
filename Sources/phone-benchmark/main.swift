// The phone-number benchmark and agreement driver (scripts/phonemeta/ runs it; see BENCHMARKS.md).
//
//   phone-benchmark results CORPUS OUT   parse every corpus line, write one result line each
//   phone-benchmark bench CORPUS [SECONDS]   time parse + validate + type over the corpus
//   phone-benchmark parse INPUT [REGION]   show what the gateway makes of one input
//
// A corpus line is `REGION<TAB>INPUT` (REGION empty for none), with `\t`, `\n` and `\\` escaped.
import Foundation
import GatewayCore

struct CorpusEntry {
    var region: String?
    var input: String
}

func unescape(_ text: Substring) -> String {
    guard text.contains("\\") else { return String(text) }
    // By scalars: a backslash may be followed by a combining mark that would fuse with the next letter.
    var output = String.UnicodeScalarView()
    var iterator = text.unicodeScalars.makeIterator()
    while let scalar = iterator.next() {
        guard scalar == "\\", let next = iterator.next() else {
            output.append(scalar)
            continue
        }
        switch next {
        case "t": output.append("\t")
        case "n": output.append("\n")
        default: output.append(next)
        }
    }
    return String(output)
}

func escape(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
        .replacingOccurrences(of: "\n", with: "\\n")
}

func readCorpus(_ path: String) throws -> [CorpusEntry] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    var entries: [CorpusEntry] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        guard let tab = line.firstIndex(of: "\t") else { continue }
        let region = line[..<tab]
        entries.append(
            CorpusEntry(region: region.isEmpty ? nil : String(region), input: unescape(line[line.index(after: tab)...]))
        )
    }
    return entries
}

func describe(_ entry: CorpusEntry) -> String {
    do {
        let number = try PhoneNumberParser.parse(entry.input, defaultRegion: entry.region)
        let (region, type) = number.analysis
        return [
            "ok", type != .unknown ? "1" : "0", number.e164, region ?? "-", type.libphonenumberName,
            number.isPossible ? "1" : "0", number.extension ?? "", number.international, number.national,
        ].map(escape).joined(separator: "\t")
    } catch {
        return "error\t\(error.kind.rawValue)"
    }
}

func usage() -> Never {
    FileHandle.standardError.write(
        Data("usage: phone-benchmark results CORPUS OUT | bench CORPUS [SECONDS] | parse INPUT [REGION]\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { usage() }
switch arguments[1] {
case "results":
    guard arguments.count == 4 else { usage() }
    let corpus = try readCorpus(arguments[2])
    var output = ""
    output.reserveCapacity(corpus.count * 64)
    for entry in corpus {
        output += describe(entry)
        output += "\n"
    }
    try output.write(toFile: arguments[3], atomically: true, encoding: .utf8)
    print("wrote \(corpus.count) results")

case "bench":
    let corpus = try readCorpus(arguments[2])
    let seconds = arguments.count > 3 ? Double(arguments[3]) ?? 5 : 5
    let clock = ContinuousClock()
    // First use decodes the metadata; time it apart from the steady state.
    let loadStart = clock.now
    _ = try? PhoneNumberParser.parse("+16505553434")
    let load = clock.now - loadStart
    var checksum = 0
    var parsed = 0
    var rounds = 0
    let start = clock.now
    let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
    repeat {
        for entry in corpus {
            if let number = try? PhoneNumberParser.parse(entry.input, defaultRegion: entry.region) {
                let (region, type) = number.analysis
                checksum &+= (type != .unknown ? 1 : 0) &+ (region?.count ?? 0) &+ type.rawValue.count
                parsed += 1
            }
        }
        rounds += 1
    } while clock.now < deadline
    let elapsed = clock.now - start
    let total = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let inputs = rounds * corpus.count
    let rate = Double(inputs) / total
    let loadMilliseconds = Double(load.components.seconds) * 1000 + Double(load.components.attoseconds) / 1e15
    print("metadata_load_ms\t\(String(format: "%.1f", loadMilliseconds))")
    print("inputs\t\(inputs)\trounds\t\(rounds)\tparsed\t\(parsed)\tchecksum\t\(checksum)")
    print("seconds\t\(String(format: "%.3f", total))")
    print("per_second\t\(String(format: "%.0f", rate))")
    print("us_per_input\t\(String(format: "%.3f", 1e6 / rate))")

case "parse":
    let entry = CorpusEntry(region: arguments.count > 3 ? arguments[3] : nil, input: arguments[2])
    print(describe(entry))
    do {
        let number = try PhoneNumber(parsing: entry.input, defaultRegion: entry.region)
        print(
            "PhoneNumber: \(number.e164) valid=\(number.isValid) type=\(number.type.rawValue) "
                + "region=\(number.region ?? "-") ext=\(number.extension ?? "-") \(number.international)")
    } catch {
        print("PhoneNumber: \(error)")
    }

default:
    usage()
}

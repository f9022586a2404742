/// The steps of a recording as the host reads them (`--backend recorded:FILE`, `--http-replay
/// FILE`), by the rule every replayer reads a transcript by (protocol/conformance/README.md,
/// "Layout"): a step starts at a line whose first byte is `{`, and the lines after it up to the
/// next such line are its own (a long `send` or `expect` laid out one member per line); a non-blank
/// line before the first step is a step of its own. Blank lines before it are skipped, those after
/// a step kept in it (white space), so that line `n` of a step's text is line `line + n - 1` of the
/// file.
package enum RecordingSteps {
    /// Each step of `bytes`: the number of its first line (from 1) and its text, its lines joined
    /// by line feeds, which JSON reads as white space.
    package static func steps(of bytes: [UInt8]) -> [(line: Int, text: [UInt8])] {
        var steps: [(line: Int, text: [UInt8])] = []
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let blank = !line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D })
            if blank && steps.isEmpty { continue }
            if line.first == UInt8(ascii: "{") || steps.isEmpty {
                steps.append((number, Array(line)))
            } else {
                steps[steps.count - 1].text.append(UInt8(ascii: "\n"))
                steps[steps.count - 1].text.append(contentsOf: line)
            }
        }
        return steps
    }

    /// A step that is no JSON: the line of the file where reading it stopped, and why.
    package struct NotJSON: Error {
        package let line: Int
        package let reason: String
    }

    /// The JSON of a step of ``steps(of:)`` that starts at line `line`.
    package static func parse(_ text: [UInt8], at line: Int) throws(NotJSON) -> JSON {
        do {
            return try JSON.parse(text)
        } catch let error as JSONParseError {
            throw NotJSON(line: line + max(error.line, 1) - 1, reason: error.message)
        } catch {
            throw NotJSON(line: line, reason: "\(error)")
        }
    }
}

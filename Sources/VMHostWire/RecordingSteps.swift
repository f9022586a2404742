/// The steps of a recording as the host reads them (`--backend recorded:FILE`, `--http-replay
/// FILE`), by the rule every replayer reads a transcript by (protocol/conformance/README.md,
/// "Layout"): a step starts at a line whose first byte is `{`, and the lines after it up to the
/// next such line are its own (a long `send` or `expect` laid out one member per line); a non-blank
/// line before the first step is a step of its own. Blank lines are skipped.
package enum RecordingSteps {
    /// Each step of `bytes`: the number of its first line (from 1) and its text, its lines joined
    /// by line feeds, which JSON reads as white space.
    package static func steps(of bytes: [UInt8]) -> [(line: Int, text: [UInt8])] {
        var steps: [(line: Int, text: [UInt8])] = []
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
            if line.first == UInt8(ascii: "{") || steps.isEmpty {
                steps.append((number, Array(line)))
            } else {
                steps[steps.count - 1].text.append(UInt8(ascii: "\n"))
                steps[steps.count - 1].text.append(contentsOf: line)
            }
        }
        return steps
    }
}

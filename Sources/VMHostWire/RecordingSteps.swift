/// The steps of a recording as the host reads them (`--backend recorded:FILE`, `--http-replay
/// FILE`) and writes them (`--record`, ``text(of:)``), by the rules every replayer reads and
/// writes a transcript by (protocol/conformance/README.md, "Layout"). Reading: a step starts at a
/// line whose first byte is `{`, and the lines after it up to the next such line are its own (a
/// long `send` or `expect` laid out one member per line); a non-blank line before the first step
/// is a step of its own. Blank lines before it are skipped, those after a step kept in it (white
/// space), so that line `n` of a step's text is line `line + n - 1` of the file.
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

    /// The JSON of each step of `bytes`, in order (a recording as a test reads it).
    package static func values(of bytes: [UInt8]) throws(NotJSON) -> [JSON] {
        var values: [JSON] = []
        for step in steps(of: bytes) { values.append(try parse(step.text, at: step.line)) }
        return values
    }

    /// A step whose compact text is longer than this many characters (Unicode code points) is laid
    /// out over several lines when it is a `send` or an `expect` (``text(of:)``).
    package static let width = 160

    /// The text of `step` as every writer of a recording writes it (protocol/conformance/README.md,
    /// "Layout"), without its final line feed: its compact JSON when that fits in ``width``
    /// characters; else, when its last member is a `send` or an `expect` of a non-empty object or
    /// array, a first line `{` holding the members before it (each `"name":value,` compact) and
    /// `"expect":` with the opening bracket, then one member or element of that value per line,
    /// indented two spaces a level, compact when it fits in ``width`` (its indentation not counted)
    /// or is no non-empty object or array, else laid out the same way a level deeper; each closing
    /// bracket on a line of its own at its opening's indentation. The replayers' `--update` writes
    /// the same text (`step_text` in the Python client, `stepText` in the Node one), so that an
    /// update of a recording the host wrote changes the lines of the values that changed only.
    ///
    /// An object holding a key twice is laid out as its compact text reads: the key at its first
    /// place, with its last value.
    package static func text(of step: JSON) -> [UInt8] {
        let compact = step.serialized()
        guard codePoints(compact) > width, case .object(let object) = step else { return compact }
        let members = distinctMembers(of: object)
        guard let last = members.last, last.key == "send" || last.key == "expect", isLaidOut(last.value) else {
            return compact
        }
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(compact.count + compact.count / 4)
        for member in members.dropLast() {
            JSON.appendQuoted(member.key, to: &out)
            out.append(UInt8(ascii: ":"))
            member.value.appendSerialized(to: &out)
            out.append(UInt8(ascii: ","))
        }
        JSON.appendQuoted(last.key, to: &out)
        out.append(UInt8(ascii: ":"))
        appendBlock(last.value, depth: 0, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A non-empty object or array that does not fit on its line: its opening bracket where it
    /// stands, one member or element per line at `depth` + 1, its closing bracket at `depth`.
    private static func appendBlock(_ value: JSON, depth: Int, to out: inout [UInt8]) {
        let entries: [(lead: [UInt8], item: JSON)]
        let open: UInt8
        let close: UInt8
        switch value {
        case .object(let object):
            entries = distinctMembers(of: object).map { member in
                var lead: [UInt8] = []
                JSON.appendQuoted(member.key, to: &lead)
                lead.append(UInt8(ascii: ":"))
                return (lead, member.value)
            }
            (open, close) = (UInt8(ascii: "{"), UInt8(ascii: "}"))
        case .array(let elements):
            entries = elements.map { ([], $0) }
            (open, close) = (UInt8(ascii: "["), UInt8(ascii: "]"))
        default:
            value.appendSerialized(to: &out)
            return
        }
        out.append(open)
        for index in entries.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\n"))
            appendIndent(depth + 1, to: &out)
            out.append(contentsOf: entries[index].lead)
            let item = entries[index].item
            let compact = item.serialized()
            if !isLaidOut(item) || codePoints(entries[index].lead) + codePoints(compact) <= width {
                out.append(contentsOf: compact)
            } else {
                appendBlock(item, depth: depth + 1, to: &out)
            }
        }
        out.append(UInt8(ascii: "\n"))
        appendIndent(depth, to: &out)
        out.append(close)
    }

    /// Whether `value` is laid out when it does not fit: a non-empty object or array.
    private static func isLaidOut(_ value: JSON) -> Bool {
        switch value {
        case .object(let object): !object.isEmpty
        case .array(let elements): !elements.isEmpty
        default: false
        }
    }

    /// Two spaces per level.
    private static func appendIndent(_ depth: Int, to out: inout [UInt8]) {
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    /// The Unicode code points of UTF-8 `bytes`: the bytes that start one.
    private static func codePoints(_ bytes: [UInt8]) -> Int {
        var count = 0
        for byte in bytes where byte & 0xC0 != 0x80 { count += 1 }
        return count
    }

    /// `object`'s members as its compact text has them: a key held twice at its first place, with
    /// its last value (as jansson writes it).
    private static func distinctMembers(of object: JSONObject) -> [JSONObject.Member] {
        guard !object.keysDiffer else { return object.members }
        var members: [JSONObject.Member] = []
        var places: [String: Int] = [:]
        for member in object.members {
            if let place = places[member.key] {
                members[place].value = member.value
            } else {
                places[member.key] = members.count
                members.append(member)
            }
        }
        return members
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

/// `--help`: overview, discussion, usage and every option with its explanation.
@_spi(Transport)
public struct HelpText {
    package let command: String
    package let overview: String
    package let discussion: String
    package let options: [OptionSpec]

    /// The help of `command`: `overview`, then `discussion`, the usage and `options`.
    public init(command: String, overview: String, discussion: String, options: [OptionSpec]) {
        self.command = command
        self.overview = overview
        self.discussion = discussion
        self.options = options
    }

    /// Text column of option explanations, and the width text is wrapped to.
    private let column = 26
    private let width = 100

    /// `vmhost [--framing <auto|ndjson|lsp>] … [--version] [--help]`
    public var usage: String {
        let synopsis = options.filter { $0.name != "help" && $0.name != "version" }.map { option in
            "[--\(option.name)\(option.value.map { " <\($0)>" } ?? "")]"
        }
        return ([command] + synopsis).joined(separator: " ")
    }

    /// The whole text `--help` prints.
    public var text: String {
        var out = "OVERVIEW: \(overview)\n\n\(discussion)\n\nUSAGE: \(usage)\n\nOPTIONS:\n"
        for option in options {
            var explanation = option.abstract
            var notes: [String] = []
            if let choices = option.choices { notes.append("values: " + choices.joined(separator: ", ")) }
            if let defaultValue = option.defaultValue { notes.append("default: \(defaultValue)") }
            if !notes.isEmpty { explanation += " (\(notes.joined(separator: "; ")))" }
            let label = "  " + option.label
            let lines = wrap(explanation, width: width - column)
            if label.count + 2 <= column {
                out += label.padding(to: column) + lines[0] + "\n"
                for line in lines.dropFirst() { out += String(repeating: " ", count: column) + line + "\n" }
            } else {
                out += label + "\n"
                for line in lines { out += String(repeating: " ", count: column) + line + "\n" }
            }
            if let discussion = option.discussion {
                for line in wrap(discussion, width: width - column - 2) {
                    out += String(repeating: " ", count: column + 2) + line + "\n"
                }
            }
            out += "\n"
        }
        return out
    }

    private func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        lines.append(line)
        return lines
    }
}

extension String {
    fileprivate func padding(to length: Int) -> String {
        count >= length ? self + " " : self + String(repeating: " ", count: length - count)
    }
}

/// One option of the command line: `--name <value>`, or a flag `--name` when `value` is nil.
///
/// The command line is parsed here rather than by a general argument parser: vmhost has a dozen
/// options, and a reflection-based parser took a third of the process's start-up (bench/RESULTS.md).
public struct OptionSpec: Sendable {
    public let name: String
    public let short: Character?
    /// The value's name in usage (`<framing>`); nil for a flag.
    public let value: String?
    /// The values allowed, if a fixed set.
    public let choices: [String]?
    public let defaultValue: String?
    public let abstract: String
    public let discussion: String?

    public init(
        _ name: String, short: Character? = nil, value: String? = nil, choices: [String]? = nil,
        defaultValue: String? = nil, abstract: String, discussion: String? = nil
    ) {
        self.name = name
        self.short = short
        self.value = value
        self.choices = choices
        self.defaultValue = defaultValue
        self.abstract = abstract
        self.discussion = discussion
    }

    /// `--framing <framing>`, `--test-controls`, `-h, --help`.
    public var label: String {
        var label = short.map { "-\($0), " } ?? ""
        label += "--\(name)"
        if let value { label += " <\(value)>" }
        return label
    }
}

/// A command line that cannot be used; the message says what is wrong.
public struct UsageError: Error {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The options given on a command line: `--name value`, `--name=value`, flags. A later value of an
/// option replaces an earlier one.
public struct ParsedArguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private let options: [OptionSpec]

    public init(_ arguments: [String], options: [OptionSpec]) throws(UsageError) {
        self.options = options
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-"), argument.count > 1 else {
                throw UsageError("Unexpected argument '\(argument)'")
            }
            var name = argument.hasPrefix("--") ? String(argument.dropFirst(2)) : String(argument.dropFirst())
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            let isShort = !argument.hasPrefix("--")
            guard let option = options.first(where: { isShort ? ($0.short.map(String.init) == name) : $0.name == name }) else {
                throw UsageError("Unknown option '\(argument)'")
            }
            guard option.value != nil else {
                if inline != nil { throw UsageError("'\(option.label)' takes no value") }
                flags.insert(option.name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else if index < arguments.count, !(arguments[index].hasPrefix("--") && arguments[index].count > 2) {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError("Missing value for '\(option.label)'")
            }
            if let choices = option.choices, !choices.contains(value) {
                throw UsageError(
                    "The value '\(value)' is invalid for '\(option.label)'. Please provide one of \(Self.list(choices)).")
            }
            values[option.name] = value
        }
    }

    public func flag(_ name: String) -> Bool { flags.contains(name) }

    public func value(_ name: String) -> String? { values[name] }

    /// The value of `name` as an integer, or nil if not given.
    public func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text) else {
            let label = options.first { $0.name == name }?.label ?? "--\(name)"
            throw UsageError("The value '\(text)' is invalid for '\(label)': expected a whole number")
        }
        return number
    }

    /// `'a', 'b' or 'c'`.
    public static func list(_ items: [String]) -> String {
        let quoted = items.map { "'\($0)'" }
        guard quoted.count > 1 else { return quoted.joined() }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
    }
}

/// `--help`: overview, discussion, usage and every option with its explanation.
public struct HelpText {
    public let command: String
    public let overview: String
    public let discussion: String
    public let options: [OptionSpec]

    public init(command: String, overview: String, discussion: String, options: [OptionSpec]) {
        self.command = command
        self.overview = overview
        self.discussion = discussion
        self.options = options
    }

    /// Text column of option explanations, and the width text is wrapped to.
    private let column = 26
    private let width = 100

    /// `vmhost [--framing <framing>] … [--version] [--help]`
    public var usage: String {
        let synopsis = options.filter { $0.name != "help" && $0.name != "version" }.map { option in
            "[--\(option.name)\(option.value.map { " <\($0)>" } ?? "")]"
        }
        return ([command] + synopsis).joined(separator: " ")
    }

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

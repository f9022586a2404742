/// One option of the command line: `--name <value>`, or a flag `--name` when `value` is nil.
///
/// The server's standard options (``Server/standardOptions``) and an app's own
/// (``ServerConfiguration/options``) are declared alike; `--help` lists them all with their
/// explanations, and ``ParsedArguments`` reads them.
///
/// The command line is parsed here rather than by a general argument parser: a server has a dozen
/// options, and a reflection-based parser costs more start-up than the rest of the process
/// (bench/RESULTS.md).
public struct OptionSpec: Sendable {
    /// The long name, without the dashes: `backend` for `--backend`.
    @_spi(Transport)
    public let name: String
    /// A one-letter alias (`-h`), if any.
    package let short: Character?
    /// The value's name in usage (`<FILE>`); nil for a flag. One style in every listing: a word in
    /// capitals naming what is given, its unit where it has one (`FILE`, `DIR`, `N`, `MS`, `BYTES`,
    /// `LEVEL`), or a few fixed words between bars (`auto|ndjson|lsp`, `embedded|URL`).
    package let value: String?
    /// The values allowed, if a fixed set; any other value is a usage error.
    package let choices: [String]?
    /// The value used when the option is absent, as `--help` shows it.
    package let defaultValue: String?
    /// One sentence: what the option does.
    package let abstract: String
    /// More explanation, shown indented under the abstract.
    package let discussion: String?

    /// An option taking a value when `value` names it, else a flag.
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

    /// `--framing <auto|ndjson|lsp>`, `--test-controls`, `-h, --help`.
    package var label: String {
        var label = short.map { "-\($0), " } ?? ""
        label += "--\(name)"
        if let value { label += " <\(value)>" }
        return label
    }
}

/// A command line that cannot be used; the message says what is wrong. The server writes it with
/// the usage to stderr and exits 64 (EX_USAGE).
public struct UsageError: Error, Sendable, Equatable {
    /// What is wrong, naming the option: `--timeout-ms must be a positive number of milliseconds, got 0`.
    public var message: String
    /// A usage error saying `message`.
    public init(_ message: String) { self.message = message }
}

/// The options given on a command line: `--name value`, `--name=value`, flags. A later value of an
/// option replaces an earlier one.
public struct ParsedArguments: Sendable {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []
    private let options: [OptionSpec]

    /// Reads `arguments` (without the program's name) against `options`: an unknown option, a
    /// missing value, a value outside an option's choices or a stray argument is a usage error.
    @_spi(Transport)
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

    /// Whether the flag `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value given to `--name`, or nil if the option was not given.
    public func value(_ name: String) -> String? { values[name] }

    /// The value of `--name` as an integer, or nil if not given; a usage error if not a whole number.
    public func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = values[name] else { return nil }
        guard let number = Int(text) else {
            let label = options.first { $0.name == name }?.label ?? "--\(name)"
            throw UsageError("The value '\(text)' is invalid for '\(label)': expected a whole number")
        }
        return number
    }

    /// `'a', 'b' or 'c'`.
    static func list(_ items: [String]) -> String {
        let quoted = items.map { "'\($0)'" }
        guard quoted.count > 1 else { return quoted.joined() }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
    }
}

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

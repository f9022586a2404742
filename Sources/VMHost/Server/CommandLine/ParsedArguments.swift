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

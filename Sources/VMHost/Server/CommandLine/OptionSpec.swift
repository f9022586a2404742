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

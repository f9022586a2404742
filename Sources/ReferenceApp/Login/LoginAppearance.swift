import VMHostWire

/// What the mode alone decides on screen: tab colours and which lines and containers are hidden.
///
/// Switching the mode is one input; every output here follows from it.
enum LoginAppearance {
    /// The colour of the selected tab's title.
    static let selectedTabColor = "#1E88E5"
    /// The colour of the other tab's title.
    static let unselectedTabColor = "#212121"

    /// The JSON Schema of a tab colour output.
    static let tabColorSchema: JSON = ["type": "string", "enum": [.string(selectedTabColor), .string(unselectedTabColor)]]

    /// The title colour of `tab` while `mode` is shown.
    static func tabColor(_ tab: LoginMode, mode: LoginMode) -> String {
        tab == mode ? selectedTabColor : unselectedTabColor
    }

    /// Whether the line and the container of `tab` are hidden while `mode` is shown.
    static func isHidden(_ tab: LoginMode, mode: LoginMode) -> Bool {
        tab != mode
    }
}

/// What the mode alone decides on screen: tab colours and which lines and containers are hidden.
///
/// Switching the mode is one input; every output here follows from it.
enum LoginAppearance {
    /// The colour of a tab's title: `"#1E88E5"` for the selected tab, `"#212121"` for the other.
    enum TabColor: String, Sendable, CaseIterable, Codable {
        case selected = "#1E88E5"
        case unselected = "#212121"
    }

    /// The title colour of `tab` while `mode` is shown.
    static func tabColor(_ tab: LoginMode, mode: LoginMode) -> TabColor {
        tab == mode ? .selected : .unselected
    }

    /// Whether the line and the container of `tab` are hidden while `mode` is shown.
    static func isHidden(_ tab: LoginMode, mode: LoginMode) -> Bool {
        tab != mode
    }
}

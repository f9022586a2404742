extension String {
    /// The string without white space (Unicode's `White_Space`: spaces of every width, tabs, line
    /// breaks) at either end.
    public func trimmingWhiteSpace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return String(self[first...last])
    }
}

/// Why the state store could not be opened, read or written. The message names the file or the
/// operation, never a stored value (tokens are stored there).
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

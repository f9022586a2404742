extension Array where Element == UInt8 {
    /// `withUnsafeBytes(_:)`, for the host's hot paths.
    ///
    /// A closure made in code isolated to an actor and handed to the standard library (a module
    /// not checked for strict concurrency) checks at run time, on every call, that it runs on that
    /// actor; for the host actor, whose executor is the event loop, that check costs about 400
    /// instructions. Handed to this function, of a module that is checked, it makes no such check:
    /// the compiler has already proven it.
    @inlinable
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(body)
    }
}

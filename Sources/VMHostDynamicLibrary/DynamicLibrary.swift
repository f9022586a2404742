#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A C library opened with `dlopen` when first needed rather than linked: a host that never uses
/// it maps none of it (libcurl for the HTTP backend, SQLite for `--state-dir`).
///
/// ```swift
/// guard let library = DynamicLibrary.open(firstOf: ["libsqlite3.so.0", "libsqlite3.so"]),
///       let step = library.function("sqlite3_step", as: Step.self) else { … }
/// ```
///
/// A library opened is never closed: the functions looked up in it stay valid for the process.
package struct DynamicLibrary: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer

    /// The first of `names` that opens (symbols bound now, kept local), or nil if none does.
    package static func open(firstOf names: [String]) -> DynamicLibrary? {
        names.lazy.compactMap { dlopen($0, RTLD_NOW | RTLD_LOCAL) }.first.map(DynamicLibrary.init(handle:))
    }

    /// The function `name` as the C function type `type`, or nil if the library lacks it.
    package func function<T>(_ name: String, as type: T.Type) -> T? {
        address(name).map { unsafeBitCast($0, to: type) }
    }

    /// The address of `name`, or nil: for a function no Swift type can call (a variadic one).
    package func address(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, name)
    }
}

import VMHostDynamicLibrary

/// The few functions of SQLite's C library the store uses, looked up when a store is first opened.
///
/// SQLite is loaded with `dlopen` rather than linked: a host started without `--state-dir` (every
/// test, every transcript, the benchmarks) then maps no SQLite at all, and its start-up and memory
/// stay what they are without it. Debian's `libsqlite3-0` provides the library.
struct SQLiteLibrary: @unchecked Sendable {
    typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?, Int32, UnsafePointer<CChar>?) -> Int32
    typealias Close = @convention(c) (OpaquePointer?) -> Int32
    typealias Prepare = @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?
    ) -> Int32
    /// The last parameter is a destructor pointer; -1 is `SQLITE_TRANSIENT` (SQLite copies the text).
    typealias BindText = @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, Int32, Int) -> Int32
    typealias Step = @convention(c) (OpaquePointer?) -> Int32
    typealias ColumnText = @convention(c) (OpaquePointer?, Int32) -> UnsafePointer<UInt8>?
    typealias ColumnBytes = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias Finalize = @convention(c) (OpaquePointer?) -> Int32
    typealias ErrorMessage = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
    typealias BusyTimeout = @convention(c) (OpaquePointer?, Int32) -> Int32

    let open: Open
    let close: Close
    let prepare: Prepare
    let bindText: BindText
    let step: Step
    let columnText: ColumnText
    let columnBytes: ColumnBytes
    let finalize: Finalize
    let errorMessage: ErrorMessage
    let busyTimeout: BusyTimeout

    static let ok: Int32 = 0
    static let row: Int32 = 100
    static let done: Int32 = 101
    /// Another connection holds the lock (`SQLITE_BUSY`), or this one's own (`SQLITE_LOCKED`).
    static let busy: Int32 = 5
    static let locked: Int32 = 6
    /// The file is damaged (`SQLITE_CORRUPT`) or no database at all (`SQLITE_NOTADB`).
    static let corrupt: Int32 = 11
    static let notADatabase: Int32 = 26
    static let openReadOnly: Int32 = 0x0000_0001
    static let openReadWrite: Int32 = 0x0000_0002
    static let openFullMutex: Int32 = 0x0001_0000
    /// Refuses a path that is a symbolic link (SQLite 3.31 and later; older ones ignore the flag,
    /// and the store checks the path itself before opening it).
    static let openNoFollow: Int32 = 0x0100_0000
    static let transient = -1

    /// The library, loaded once; nil with the reason when it cannot be.
    static let shared: Result<SQLiteLibrary, StateStoreError> = load()

    private static func load() -> Result<SQLiteLibrary, StateStoreError> {
        #if canImport(Darwin)
        let names = ["libsqlite3.dylib"]
        #else
        let names = ["libsqlite3.so.0", "libsqlite3.so"]
        #endif
        guard let library = DynamicLibrary.open(firstOf: names) else {
            return .failure(StateStoreError("SQLite's library (libsqlite3.so.0) could not be loaded; install libsqlite3-0"))
        }
        func symbol<T>(_ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        guard let open = symbol("sqlite3_open_v2", Open.self),
              let close = symbol("sqlite3_close_v2", Close.self),
              let prepare = symbol("sqlite3_prepare_v2", Prepare.self),
              let bindText = symbol("sqlite3_bind_text", BindText.self),
              let step = symbol("sqlite3_step", Step.self),
              let columnText = symbol("sqlite3_column_text", ColumnText.self),
              let columnBytes = symbol("sqlite3_column_bytes", ColumnBytes.self),
              let finalize = symbol("sqlite3_finalize", Finalize.self),
              let errorMessage = symbol("sqlite3_errmsg", ErrorMessage.self),
              let busyTimeout = symbol("sqlite3_busy_timeout", BusyTimeout.self)
        else {
            return .failure(StateStoreError("SQLite's library lacks a function the store needs"))
        }
        return .success(SQLiteLibrary(
            open: open, close: close, prepare: prepare, bindText: bindText, step: step, columnText: columnText,
            columnBytes: columnBytes, finalize: finalize, errorMessage: errorMessage, busyTimeout: busyTimeout))
    }
}

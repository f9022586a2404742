#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostCore

/// The files a session of one app writes, opened before anything else of it is made: `--trace
/// FILE` (appended to) and `--record FILE` (made anew). Opened without blocking: a FIFO nobody
/// reads is refused at once rather than waited on.
package struct SessionFiles: Sendable {
    package var traceFD: Int32?
    package var recordFD: Int32?

    /// No files.
    package init() {}

    /// Opens the files `settings` name: the trace first, then the recording. Throws what is wrong
    /// with the first that cannot be used (the other is then closed); `vmhost` exits 2 for it.
    package static func open(_ settings: StandardSettings) throws(SessionFileError) -> SessionFiles {
        var files = SessionFiles()
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                files.traceFD = try TraceRecorder.open(path: path)
            } catch {
                throw SessionFileError(message: error.description)
            }
        }
        if let path = settings.recordPath {
            do throws(SessionRecorder.RecordingError) {
                files.recordFD = try SessionRecorder.create(path: path)
            } catch {
                files.closeTrace()
                throw SessionFileError(message: error.description)
            }
        }
        return files
    }

    /// Closes the trace's file (a session that never started).
    package func closeTrace() {
        guard let traceFD else { return }
        _ = close(traceFD)
    }
}

/// A file of `--trace` or `--record` that cannot be used: the file and why.
package struct SessionFileError: Error, Sendable, CustomStringConvertible {
    package var message: String

    package var description: String { message }
}

import CVMHostCurl
import VMHostDynamicLibrary

/// The functions of libcurl the HTTP client uses, looked up by ``CurlEngine``'s thread when the
/// first HTTP call is made.
///
/// libcurl is loaded with `dlopen` rather than linked: a host that never makes an HTTP call (an app
/// on an embedded backend, every test and transcript on it, the benchmarks) then maps neither libcurl nor
/// the thirty-odd libraries it depends on, and its start-up and memory stay what they are without
/// them. Debian's `libcurl4` provides the library.
///
/// `curl_easy_setopt` and `curl_easy_getinfo` are variadic, which Swift cannot call through a
/// pointer: they are kept as raw pointers and called through the typed functions of `CVMHostCurl`.
struct CurlLibrary: @unchecked Sendable {
    typealias GlobalInit = @convention(c) (Int) -> Int32
    typealias EasyInit = @convention(c) () -> UnsafeMutableRawPointer?
    typealias EasyCleanup = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias MultiInit = @convention(c) () -> UnsafeMutableRawPointer?
    typealias MultiHandle = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
    typealias MultiPerform = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> Int32
    /// `curl_multi_poll(multi, extra_fds, extra_nfds, timeout_ms, numfds)`.
    typealias MultiPoll = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<Int32>?) -> Int32
    typealias MultiWakeup = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    typealias MultiInfoRead = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> UnsafeMutablePointer<vmhost_curl_message>?
    typealias SlistAppend = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> UnsafeMutableRawPointer?
    typealias SlistFreeAll = @convention(c) (UnsafeMutableRawPointer?) -> Void

    let globalInit: GlobalInit
    let easyInit: EasyInit
    let easyCleanup: EasyCleanup
    /// `curl_easy_setopt`, called through `vmhost_curl_easy_setopt_*`.
    let easySetopt: UnsafeMutableRawPointer
    /// `curl_easy_getinfo`, called through `vmhost_curl_easy_getinfo_*`.
    let easyGetinfo: UnsafeMutableRawPointer
    let multiInit: MultiInit
    let multiAddHandle: MultiHandle
    let multiRemoveHandle: MultiHandle
    let multiPerform: MultiPerform
    let multiPoll: MultiPoll
    let multiWakeup: MultiWakeup
    let multiInfoRead: MultiInfoRead
    let slistAppend: SlistAppend
    let slistFreeAll: SlistFreeAll

    /// Where Debian's `libcurl4` (and any libcurl 7.68 or later) installs it.
    static let defaultNames = ["libcurl.so.4"]

    /// Loads libcurl from the first of `names` that opens; the error says what is missing.
    static func load(names: [String] = defaultNames) -> Result<CurlLibrary, HTTPError> {
        guard let library = DynamicLibrary.open(firstOf: names) else {
            return .failure(HTTPError.libcurlMissing)
        }
        func symbol<T>(_ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        // curl_multi_poll and curl_multi_wakeup came with libcurl 7.66 and 7.68.
        guard let globalInit = symbol("curl_global_init", GlobalInit.self),
              let easyInit = symbol("curl_easy_init", EasyInit.self),
              let easyCleanup = symbol("curl_easy_cleanup", EasyCleanup.self),
              let easySetopt = library.address("curl_easy_setopt"),
              let easyGetinfo = library.address("curl_easy_getinfo"),
              let multiInit = symbol("curl_multi_init", MultiInit.self),
              let multiAddHandle = symbol("curl_multi_add_handle", MultiHandle.self),
              let multiRemoveHandle = symbol("curl_multi_remove_handle", MultiHandle.self),
              let multiPerform = symbol("curl_multi_perform", MultiPerform.self),
              let multiPoll = symbol("curl_multi_poll", MultiPoll.self),
              let multiWakeup = symbol("curl_multi_wakeup", MultiWakeup.self),
              let multiInfoRead = symbol("curl_multi_info_read", MultiInfoRead.self),
              let slistAppend = symbol("curl_slist_append", SlistAppend.self),
              let slistFreeAll = symbol("curl_slist_free_all", SlistFreeAll.self)
        else {
            return .failure(HTTPError(.unavailable, "libcurl (libcurl.so.4) is older than 7.68; install a newer libcurl4"))
        }
        return .success(CurlLibrary(
            globalInit: globalInit, easyInit: easyInit, easyCleanup: easyCleanup, easySetopt: easySetopt,
            easyGetinfo: easyGetinfo, multiInit: multiInit, multiAddHandle: multiAddHandle,
            multiRemoveHandle: multiRemoveHandle, multiPerform: multiPerform, multiPoll: multiPoll,
            multiWakeup: multiWakeup, multiInfoRead: multiInfoRead, slistAppend: slistAppend, slistFreeAll: slistFreeAll))
    }

    // MARK: Typed calls of the variadic functions

    func set(_ easy: UnsafeMutableRawPointer, _ option: CurlOption, _ value: Int) -> Bool {
        vmhost_curl_easy_setopt_long(easySetopt, easy, option.rawValue, value) == 0
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CurlOption, offset value: Int64) -> Bool {
        vmhost_curl_easy_setopt_offset(easySetopt, easy, option.rawValue, value) == 0
    }

    /// For string options libcurl copies the text; other pointers must outlive the transfer.
    func set(_ easy: UnsafeMutableRawPointer, _ option: CurlOption, pointer value: UnsafeRawPointer?) -> Bool {
        vmhost_curl_easy_setopt_pointer(easySetopt, easy, option.rawValue, value) == 0
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CurlOption, _ value: String) -> Bool {
        value.withCString { set(easy, option, pointer: UnsafeRawPointer($0)) }
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CurlOption, _ value: vmhost_curl_write_callback) -> Bool {
        vmhost_curl_easy_setopt_write_callback(easySetopt, easy, option.rawValue, value) == 0
    }

    /// The HTTP status of the last response `easy` received; 0 when none.
    func responseCode(_ easy: UnsafeMutableRawPointer) -> Int {
        var code = 0
        return vmhost_curl_easy_getinfo_long(easyGetinfo, easy, CurlLibrary.infoResponseCode, &code) == 0 ? code : 0
    }

    // MARK: Constants of libcurl's ABI (curl/curl.h, curl/multi.h)

    /// `CURL_GLOBAL_DEFAULT`.
    static let globalDefault = 3
    /// `CURLINFO_RESPONSE_CODE` (`CURLINFO_LONG + 2`).
    static let infoResponseCode: Int32 = 0x20_0002
    /// `CURLMSG_DONE`.
    static let messageDone: Int32 = 1
    /// `CURLPROTO_HTTP | CURLPROTO_HTTPS`.
    static let protocolsHTTP = 1 | 2
}

/// The `CURLoption`s set on a transfer: the option's number plus its type's base (long 0, pointer
/// 10000, function 20000, `curl_off_t` 30000).
enum CurlOption: Int32 {
    case writeData = 10001
    case url = 10002
    case proxy = 10004
    case writeFunction = 20011
    case headerData = 10029
    case headerFunction = 20079
    case noBody = 44
    case httpHeader = 10023
    case customRequest = 10036
    case post = 47
    case followLocation = 52
    case postFieldSize = 60
    case noSignal = 99
    case maxFileSize = 30117
    case timeoutMilliseconds = 155
    case copyPostFields = 10165
    case protocols = 181
}

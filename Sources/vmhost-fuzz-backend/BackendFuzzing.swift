import Backend
import ProductList
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The invariants of the backend's response path, checked on one input: the bytes of a response
/// body, as a hostile backend might send them.
///
/// - Decoding never traps: the body is a `decode` failure, a `business` failure, or an envelope whose
///   `data` each endpoint's decoder (products, groups, group, session) turns into models or refuses
///   with a `decode` error;
/// - no error message quotes the body: inputs holding `SECRET` (the seeds and the dictionary do)
///   never find it in a message;
/// - a ProductList whose backend answers this body applies it without trapping: `refresh` and then
///   `loadMore` end (no hang), each with the outcome the decoders predict; a page that decoded is
///   shown, one cell per product of a new id, and `hasMore` is the page's.
@HostActor
enum BackendFuzzing {
    static func check(_ input: UnsafeRawBufferPointer) {
        let body = Array(input)
        let secret = contains(body, Array("SECRET".utf8))
        let page: Result<Page<Product>, BackendError>
        do throws(BackendError) {
            let envelope = try ErrorMapping.envelope(status: 200, body: body)
            page = attempt { () throws(BackendError) in try envelope.productPage() }
            for result in [
                attempt { () throws(BackendError) in _ = try envelope.groups() },
                attempt { () throws(BackendError) in _ = try envelope.group() },
                attempt { () throws(BackendError) in _ = try envelope.session() },
            ] {
                if case .failure(let error) = result { validate(error, secret: secret, businessAllowed: false) }
            }
        } catch {
            validate(error, secret: secret, businessAllowed: true)
            page = .failure(error)
        }
        if case .failure(let error) = page { validate(error, secret: secret, businessAllowed: true) }
        ListProbe(body: body).run(expecting: page)
    }

    private static func attempt<T>(_ body: () throws(BackendError) -> T) -> Result<T, BackendError> {
        do throws(BackendError) { return .success(try body()) } catch { return .failure(error) }
    }

    /// A failure is `decode` (or `business`, from the envelope itself) and quotes nothing secret.
    static func validate(_ error: BackendError, secret: Bool, businessAllowed: Bool) {
        precondition(error.kind == .decode || (businessAllowed && error.kind == .business), "unexpected kind \(error.kind)")
        // A business failure carries the envelope's own message, which is shown to the user.
        if secret && error.kind == .decode {
            let message = error.message(in: .zhHans)
            precondition(!message.contains("SECRET") && !error.detail.contains("SECRET"), "a decode error quotes the body: \(message)")
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

/// A ProductList on a backend that answers every call with the input's body.
@HostActor
struct ListProbe {
    let body: [UInt8]

    func run(expecting page: Result<Page<Product>, BackendError>) {
        let context = ViewModelContext(handle: "pl", kind: ProductListViewModel.kind, clock: ManualClock(), locale: .zhHans)
        let list = context.build { ProductListViewModel(args: .init(), api: BodyAPI(body: body)) }
        defer { context.dispose() }

        let refreshed = send("refresh", to: context)
        switch (refreshed, page) {
        case (.succeeded, .success(let page)):
            let ids = Set(page.items.map(\.id))
            precondition(list.items.count == ids.count, "\(list.items.count) cells for \(ids.count) ids")
            precondition(list.hasMore == page.hasMore && list.page == 1 && !list.isRefreshing)
            precondition(list.isEmpty == ids.isEmpty)
        case (.failed(let error), .failure(let expected)):
            precondition(
                error.kind == expected.kind.rawValue && error.message == expected.message(in: .zhHans), "\(error) for \(expected)")
            precondition(list.items.isEmpty && !list.isRefreshing)
        default:
            preconditionFailure("refresh ended \(String(describing: refreshed)) for a page that decoded as \(page)")
        }
        guard list.hasMore else { return }
        let before = list.items.count
        switch send("loadMore", to: context) {
        case .succeeded?:
            precondition(list.page == 2 && list.items.count == before && !list.isLoadingMore)
        case .failed?:
            precondition(list.page <= 1 && list.items.count == before && !list.isLoadingMore)
        case let other:
            preconditionFailure("loadMore ended \(String(describing: other))")
        }
    }

    /// Sends a command input and runs the host thread until it has ended; its outcome (nil: a hang).
    private func send(_ input: String, to context: ViewModelContext) -> CommandOutcome? {
        guard let command = context.input(named: input) as? any AnyCommand else { preconditionFailure("no command \(input)") }
        var outcome: CommandOutcome?
        do throws(InputError) {
            try command.execute(.null) { outcome = $0 }
        } catch {
            preconditionFailure("\(input) refused: \(error)")
        }
        EventLoop.shared.drain()
        precondition(outcome != nil, "\(input) did not end")
        return outcome
    }
}

/// An API whose every call answers `body` with status 200, decoded as the endpoint's result.
@HostActor
final class BodyAPI: APIClient {
    let body: [UInt8]
    var token: String?

    init(body: [UInt8]) { self.body = body }

    private func envelope() throws(BackendError) -> Envelope { try ErrorMapping.envelope(status: 200, body: body) }

    func products(page: Int, pageSize: Int) async throws -> Page<Product> { try envelope().productPage() }
    func login(username: String, password: String) async throws -> Session { try envelope().session() }
    func sendSMSCode(phone: String) async throws { _ = try envelope() }
    func loginWithCode(phone: String, code: String) async throws -> Session { try envelope().session() }
    func groups(menuUid: String) async throws -> [MenuGroup] { try envelope().groups() }
    func createGroup(menuUid: String, name: String) async throws -> MenuGroup { try envelope().group() }
    func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup { try envelope().group() }
    func deleteGroup(menuUid: String, groupId: String) async throws { _ = try envelope() }
}

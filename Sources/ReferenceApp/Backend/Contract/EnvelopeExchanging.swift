import VMHost

/// An API client built on one operation, sending an ``APIRequest`` and returning its ``Envelope``:
/// the HTTP client and the embedded backend both are. The eight calls of ``APIClient``, and keeping
/// the token after a login, are written once here on top of it.
@HostActor
package protocol EnvelopeExchanging: APIClient {
    /// The bearer token of the last successful login, sent on later calls.
    var token: String? { get set }
    func exchange(_ request: APIRequest) async throws -> Envelope
}

extension EnvelopeExchanging {
    public func products(page: Int, pageSize: Int) async throws -> Page<Product> {
        try await exchange(.products(page: page, pageSize: pageSize)).productPage()
    }

    public func login(username: String, password: String) async throws -> Session {
        let session = try await exchange(.login(username: username, password: password)).session()
        token = session.token
        return session
    }

    public func sendSMSCode(phone: String) async throws {
        _ = try await exchange(.sendSMSCode(phone: phone))
    }

    public func loginWithCode(phone: String, code: String) async throws -> Session {
        let session = try await exchange(.loginWithCode(phone: phone, code: code)).session()
        token = session.token
        return session
    }

    public func groups(menuUid: String) async throws -> [MenuGroup] {
        try await exchange(.groups(menuUid: menuUid)).groups()
    }

    public func createGroup(menuUid: String, name: String) async throws -> MenuGroup {
        try await exchange(.createGroup(menuUid: menuUid, name: name)).group()
    }

    public func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup {
        try await exchange(.renameGroup(menuUid: menuUid, groupId: groupId, name: name)).group()
    }

    public func deleteGroup(menuUid: String, groupId: String) async throws {
        _ = try await exchange(.deleteGroup(menuUid: menuUid, groupId: groupId))
    }
}

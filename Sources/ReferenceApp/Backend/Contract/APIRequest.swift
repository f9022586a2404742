import VMHost

/// One call of the contract, described once and sent by either implementation: ``HTTPAPIClient``
/// turns it into an HTTP request, ``EmbeddedBackend`` hands it to the ``DemoServer``.
package struct APIRequest: Sendable, Hashable {
    package var endpoint: BackendEndpoint
    /// The path, percent-encoded, starting with `/`.
    package var path: String
    /// Query parameters, in order, not encoded.
    package var query: [QueryItem] = []
    /// The JSON body of `POST` and `PUT`.
    package var body: JSON?

    package var method: HTTPMethod { endpoint.method }

    package struct QueryItem: Sendable, Hashable {
        package var name: String
        package var value: String
    }

    /// The request as the demo server receives it (the same as the loopback server builds from HTTP).
    var demoRequest: DemoRequest {
        DemoRequest(
            method: method.rawValue, path: path,
            query: Dictionary(query.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last }),
            body: body)
    }
}

extension APIRequest {
    static func products(page: Int, pageSize: Int) -> APIRequest {
        APIRequest(
            endpoint: .products, path: "/products",
            query: [QueryItem(name: "page", value: String(page)), QueryItem(name: "pageSize", value: String(pageSize))])
    }

    static func login(username: String, password: String) -> APIRequest {
        APIRequest(endpoint: .authLogin, path: "/auth/login", body: ["username": .string(username), "password": .string(password)])
    }

    static func sendSMSCode(phone: String) -> APIRequest {
        APIRequest(endpoint: .authSMSCode, path: "/auth/sms-code", body: ["phone": .string(phone)])
    }

    static func loginWithCode(phone: String, code: String) -> APIRequest {
        APIRequest(endpoint: .authLoginCode, path: "/auth/login-code", body: ["phone": .string(phone), "code": .string(code)])
    }

    static func groups(menuUid: String) -> APIRequest {
        APIRequest(endpoint: .groupsList, path: "/menus/\(segment(menuUid))/groups")
    }

    static func createGroup(menuUid: String, name: String) -> APIRequest {
        APIRequest(endpoint: .groupsCreate, path: "/menus/\(segment(menuUid))/groups", body: ["name": .string(name)])
    }

    static func renameGroup(menuUid: String, groupId: String, name: String) -> APIRequest {
        APIRequest(
            endpoint: .groupsRename, path: "/menus/\(segment(menuUid))/groups/\(segment(groupId))",
            body: ["name": .string(name)])
    }

    static func deleteGroup(menuUid: String, groupId: String) -> APIRequest {
        APIRequest(endpoint: .groupsDelete, path: "/menus/\(segment(menuUid))/groups/\(segment(groupId))")
    }

    /// Percent-encodes one path segment, so an id holding `/`, `?` or spaces cannot change the route.
    static func segment(_ raw: String) -> String {
        PercentEncoding.encode(raw, as: .pathSegment)
    }
}

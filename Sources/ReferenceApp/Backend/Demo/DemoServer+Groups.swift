import VMHost

extension DemoServer {
    /// The longest group name, in characters (after trimming white space).
    public static let maxGroupNameLength = 20

    /// `GET /menus/{menuUid}/groups`.
    func groups(menu: String) -> DemoResponse {
        guard let groups = menus[menu] else { return Self.menuNotFound }
        return .ok(.array(groups.map(\.json)))
    }

    /// `POST /menus/{menuUid}/groups {name}`: appends a group with the next free id and no dishes.
    mutating func createGroup(menu: String, body: JSON?) -> DemoResponse {
        guard menus[menu] != nil else { return Self.menuNotFound }
        let name: String
        switch validName(body) {
        case .success(let valid): name = valid
        case .failure(let rejection): return rejection.response
        }
        let group = MenuGroup(id: "g\(nextGroupNumber)", name: name, dishCount: 0)
        nextGroupNumber += 1
        menus[menu, default: []].append(group)
        return .ok(group.json)
    }

    /// `PUT /menus/{menuUid}/groups/{id} {name}`: renames in place; the position and dish count stay.
    mutating func renameGroup(menu: String, group id: String, body: JSON?) -> DemoResponse {
        guard let groups = menus[menu] else { return Self.menuNotFound }
        guard let index = groups.firstIndex(where: { $0.id == id }) else { return Self.groupNotFound }
        let name: String
        switch validName(body) {
        case .success(let valid): name = valid
        case .failure(let rejection): return rejection.response
        }
        menus[menu]![index].name = name
        return .ok(menus[menu]![index].json)
    }

    /// `DELETE /menus/{menuUid}/groups/{id}`: `data` is null.
    mutating func deleteGroup(menu: String, group id: String) -> DemoResponse {
        guard let groups = menus[menu] else { return Self.menuNotFound }
        guard let index = groups.firstIndex(where: { $0.id == id }) else { return Self.groupNotFound }
        menus[menu]!.remove(at: index)
        return .ok()
    }

    static let menuNotFound = DemoResponse.status(404, "菜单不存在")
    static let groupNotFound = DemoResponse.status(404, "分组不存在")

    /// The trimmed `name` of the body, or the response that rejects it.
    private func validName(_ body: JSON?) -> Result<String, NameRejection> {
        guard let raw = body?["name"]?.stringValue else { return .failure(NameRejection(Self.badRequest("name"))) }
        let name = raw.trimmingWhiteSpace()
        guard (1...Self.maxGroupNameLength).contains(name.count) else {
            return .failure(NameRejection(.business(code: "2001", message: "分组名称须为1到20个字符")))
        }
        return .success(name)
    }
}

/// A response that rejects a group name (a `Result` failure must be an `Error`).
struct NameRejection: Error {
    var response: DemoResponse
    init(_ response: DemoResponse) { self.response = response }
}

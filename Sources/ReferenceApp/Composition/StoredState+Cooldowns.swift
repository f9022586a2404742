import Backend
import Login
import StateStore
import VMHost

/// The SMS countdowns: `{phone: deadline in whole milliseconds since the Unix epoch}`, shared by
/// every host on the directory.
extension StoredState: CooldownStorage {
    /// The saved deadlines; a member out of shape is left out.
    public func savedCooldowns() -> [String: Duration] {
        deadlines(savedJSON(Self.cooldownsKey, maxBytes: 64 * 1024))
    }

    /// Saves the deadlines merged with the ones stored (by another host meanwhile): per phone the
    /// later one, without the ones passed, at most ``SMSCodeCooldown/maxPhones`` (the latest).
    public func saveCooldowns(_ deadlines: [String: Duration]) {
        writer.submit("saving the SMS countdowns") { [self] (transaction) throws(StateStoreError) in
            let stored = parsed(try transaction.value(Self.cooldownsKey), key: Self.cooldownsKey, maxBytes: 64 * 1024)
            let now = clock.wallTime
            let merged = self.deadlines(stored).merging(deadlines, uniquingKeysWith: max).filter { $0.value > now }
            let kept = merged.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(SMSCodeCooldown.maxPhones)
            let members = JSONObject(kept.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value.milliseconds)) })
            try transaction.set(Self.cooldownsKey, String(decoding: JSON.object(members).serialized(), as: UTF8.self))
        }
    }

    private func deadlines(_ json: JSON?) -> [String: Duration] {
        guard let json else { return [:] }
        guard case .object(let members) = json else {
            logger.warning("the saved '\(Self.cooldownsKey)' is out of shape; ignored")
            return [:]
        }
        var deadlines: [String: Duration] = [:]
        for member in members {
            guard let milliseconds = member.value.intValue, milliseconds >= 0 else { continue }
            deadlines[member.key] = .milliseconds(milliseconds)
        }
        return deadlines
    }
}

@_spi(Transport) import VMHostWire

/// A pending `vm.changed` notification of one subscription; merges while the reader is slow.
///
/// `values` holds full values; `splices` holds list edits of array properties of `diff`
/// subscriptions. `latest` holds each spliced list's full value, filled in only when the message
/// merges into a waiting one (``OutputQueue/push(merging:key:completeForMerge:)``): a merge of two
/// splice runs falls back to the full value instead of growing without bound.
@_spi(Transport)
public struct ChangedMessage: MergeableMessage {
    var subscription: String
    var vm: String
    var values: JSONObject
    var splices: JSONObject
    var latest: [String: JSON]

    /// Takes the newer values (and edits) of the same subscription.
    public mutating func merge(_ newer: ChangedMessage) {
        for member in newer.values {
            splices[member.key] = nil
            latest[member.key] = nil
            values[member.key] = member.value
        }
        for member in newer.splices {
            if values[member.key] != nil || splices[member.key] != nil {
                // Two edits of one list in a row: send the latest full list instead.
                splices[member.key] = nil
                values[member.key] = newer.latest[member.key]
                latest[member.key] = nil
            } else {
                splices[member.key] = member.value
                latest[member.key] = newer.latest[member.key]
            }
        }
    }

    /// The `vm.changed` notification.
    public func encode() -> [UInt8] {
        var text = JSONObjectText.jsonRPC()
        text.append("method", literal: #""vm.changed""#)
        text.append("params") { params in
            params.append("subscription", .string(subscription))
            params.append("vm", .string(vm))
            params.append("values", .object(values))
            if !splices.isEmpty { params.append("splices", .object(splices)) }
        }
        return text.finish()
    }
}

import VMHostEventLoop
import VMHostWire

/// A kind that says how its screen comes back after the server restarted (`vmhost-web` with
/// `--session-dir`, protocol/SPEC.md §12, "After a restart").
///
/// Every kind comes back without this: the server keeps what recreates each view-model of a
/// resumable session (its kind, its args, the last value sent to each of its value inputs, in the
/// order sent, its handle and its subscriptions) and, after a restart, makes it again and sends it
/// those values. Secret inputs (`secret: true`) are never kept. A kind adopts `Restorable` to keep
/// fewer inputs (``unkeptInputs``), or to keep more than its inputs: what its own work produced
/// (the pages a list had loaded), given back to ``restore(from:)`` once the view-model was made
/// again, to be redone by the kind's own means (loading those pages again).
///
/// What ``restoration`` returns is written in the server's session folder: never a secret (a
/// token, a password, a code). A value the app itself keeps elsewhere (a login in its own store)
/// is named by an id that is no secret.
@HostActor
public protocol Restorable: ViewModel {
    /// The value inputs whose values are not kept (besides the secret ones, never kept).
    static var unkeptInputs: Set<String> { get }
    /// What the kind keeps beside its inputs, asked whenever the session's screens are written;
    /// nil: nothing.
    var restoration: JSON? { get }
    /// The view-model was made again after a restart, its kept inputs sent: `restoration` is what
    /// ``restoration`` last returned.
    func restore(from restoration: JSON)
}

extension Restorable {
    /// Every value input that is not secret is kept.
    public static var unkeptInputs: Set<String> { [] }
    /// Nothing beside the inputs.
    public var restoration: JSON? { nil }
    /// Nothing to do.
    public func restore(from restoration: JSON) {}
}

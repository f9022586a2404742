// The todo app as a library (libtodo-embedded): its kinds and options served in the caller's
// process through vmhost's C ABI (include/vmhost.h in vmhost's CVMHost target). The framework
// (VMHostEmbedding) defines the ABI; this one function names the app's server.
import TodoKinds
import VMHostEmbedding

/// `vmhost_open` of the todo app: see include/vmhost.h.
@_cdecl("vmhost_open")
public func vmhostOpen(
    _ argc: Int32, _ argv: UnsafePointer<UnsafePointer<CChar>?>?, _ onMessage: vmhost_message_fn?,
    _ onLog: vmhost_log_fn?, _ context: UnsafeMutableRawPointer?, _ hostOut: UnsafeMutablePointer<vmhost_handle>?
) -> Int32 {
    VMHostABI.open(TodoServer.server, argc, argv, onMessage, onLog, context, hostOut)
}

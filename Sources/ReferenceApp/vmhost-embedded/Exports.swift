// The reference app as a library (libvmhost-embedded): the kinds and options of `vmhost`, served
// in the caller's process through the C ABI of include/vmhost.h (Sources/CVMHost). The framework
// (VMHostEmbedding) defines the rest of the ABI; this names the app.
import AppComposition
import VMHost
import VMHostEmbedding

/// `vmhost_open` of the reference app: see include/vmhost.h.
@_cdecl("vmhost_open")
public func vmhostOpen(
    _ argc: Int32, _ argv: UnsafePointer<UnsafePointer<CChar>?>?, _ onMessage: vmhost_message_fn?,
    _ onLog: vmhost_log_fn?, _ context: UnsafeMutableRawPointer?, _ hostOut: UnsafeMutablePointer<vmhost_handle>?
) -> Int32 {
    VMHostABI.open(Server(ReferenceApp.configuration), argc, argv, onMessage, onLog, context, hostOut)
}

#if WebSocket
import NIOCore
import NIOWebSocket
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// Suspending a resumable session when its connection drops, and resuming it on the connection of
/// a page that presents its token (protocol/SPEC.md §12, "Resume").
extension WebSocketSession {
    /// `link` dropped (the page closed it, or the network): a resumable session that has not ended
    /// is suspended for its grace period and true is returned; else false (close it).
    func suspend(_ link: SessionLink) -> Bool {
        guard let resumption, self.link === link, !hasEnded, !closed, !table.stopping else { return false }
        resumption.detach()
        link.leave()
        self.link = nil
        // Property changes merge while nobody reads; replies and events wait, up to the bound.
        queue.setStalled(true)
        let id = self.id, table = self.table
        graceTimer = host.configuration.clock.schedule(after: resumption.grace) {
            guard let session = table.sessions[id], session.isSuspended else { return }
            session.graceTimer = nil
            table.logger.debug("session \(id): not resumed within its grace period; closed")
            table.forget(session)
        }
        holdsSlot = true
        table.slots?.hold()
        table.suspended(self)
        table.logger.debug("session \(id) suspended")
        return true
    }

    /// A suspended session resumed or ended: the connection it counted as is given back.
    func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        table.slots?.release()
    }

    /// Makes the connection of `channel` this session's, for a page that received `received`
    /// frames: the frames after them are written again, or, when some were dropped, the current
    /// state (a resync); a connection the session still had is closed. The new token goes to the
    /// page first, in `$/session`.
    func resume(on channel: any Channel, received: Int, token: String) -> SessionLink {
        let resumption = resumption!
        releaseSlot()
        if let graceTimer { host.configuration.clock.cancel(graceTimer) }
        graceTimer = nil
        if let old = link {
            // A page that resumed while its old connection still looked open (a half-open TCP
            // connection): the old one is left.
            old.leave()
            old.channel.close(promise: nil)
        }
        var pending: [JSON] = []
        let resumed = resumption.resume(
            received: received,
            resync: { pending = host.resync() },
            makeLink: { SessionLink(channel: channel, replay: $0) })
        link = resumed.link
        var what = JSONObject()
        what.append("received", .int(Int64(resumed.receivedCount)))
        what.append("next", .int(Int64(resumed.next)))
        what.append("resync", .bool(resumed.resynced))
        if resumed.resynced { what.append("pending", .array(pending)) }
        resumed.link.sendControl(Resumption.sessionFrame(token: token, grace: resumption.grace, resumed: .object(what)))
        queue.setStalled(false)
        if queue.pendingCount > 0, !hasOutputListed {
            hasOutputListed = true
            table.withOutput.append(self)
        }
        table.logger.debug(
            "session \(id) resumed\(resumed.resynced ? " with a resync" : ""): page at \(received), next frame \(resumed.next)")
        return resumed.link
    }
}
#endif

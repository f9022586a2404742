#if WebSocket
import NIOCore
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// What a resumable session keeps in `--session-dir` (``SessionFolder``) so that its screens come
/// back after the server restarted (protocol/SPEC.md §12, "After a restart").
@HostActor
final class KeptScreens {
    let folder: SessionFolder
    /// The file of the session now: the hash of its current token.
    var name: String
    /// What was last written, to write only what changed.
    var written: [UInt8]?
    /// Set when the server stops: the file stays for the restart.
    var keptForRestart = false
    /// Whether the screens passed ``SessionFolder/maxFileBytes`` (said once until they fit again).
    var tooLarge = false

    init(folder: SessionFolder, token: String) {
        self.folder = folder
        name = SessionFolder.name(of: token)
    }
}

extension WebSocketSession {
    /// Writes the session's screens when they changed since last written. Past the bound the file
    /// is removed (the session is then not restored after a restart) and a warning says so.
    func saveScreens() {
        guard let kept, let resumption, !closed else { return }
        let bytes = KeptSession(origin: origin, received: resumption.receivedCount, screens: host.screens()).serialized()
        guard bytes != kept.written else { return }
        guard bytes.count <= SessionFolder.maxFileBytes else {
            if !kept.tooLarge {
                kept.tooLarge = true
                table.logger.warning(
                    "session \(id): its screens take \(bytes.count) bytes, more than \(SessionFolder.maxFileBytes); they are not kept for a restart")
            }
            kept.folder.remove(kept.name)
            kept.written = nil
            return
        }
        kept.tooLarge = false
        if let problem = kept.folder.write(bytes, as: kept.name) {
            table.logger.warning("session \(id): its screens could not be kept for a restart: \(problem)")
            kept.written = nil
            return
        }
        kept.written = bytes
    }

    /// The session's token changed to `token`: its file follows.
    func keptTokenChanged(to token: String) {
        guard let kept else { return }
        let next = SessionFolder.name(of: token)
        if !kept.folder.rename(kept.name, to: next) { kept.written = nil }
        kept.name = next
    }

    /// The server stops: the screens are written as they are now and kept for the restart; each
    /// view-model is told before it is disposed.
    func keepForRestart() {
        guard let kept, !closed, !hasEnded else { return }
        // Written again even if unchanged: its time says when the grace period starts.
        kept.written = nil
        saveScreens()
        guard kept.written != nil else { return }
        kept.keptForRestart = true
        host.keepForRestart()
    }

    /// The session is over for good: its file goes (unless kept for the restart).
    func dropKept() {
        guard let kept, !kept.keptForRestart else { return }
        kept.folder.remove(kept.name)
        kept.written = nil
    }
}

extension SessionRegistry {
    /// The session of `token` made again from `--session-dir` after a restart, on the connection
    /// of `channel`, for a page that received `received` frames: nil when the folder has no
    /// session of that token (never had, taken, past its grace period) or it is not from `origin`.
    @HostActor
    static func restore(
        token: String, received: Int, origin: String?, channel: any Channel, next: String, table: SessionTable,
        make: (Resumption) -> WebSocketSession
    ) -> (WebSocketSession, SessionLink)? {
        guard let folder = table.folder, received <= KeptSession.maxCount else { return nil }
        let grace = table.restoredGrace
        let name = SessionFolder.name(of: token), nextName = SessionFolder.name(of: next)
        guard let taken = folder.take(name, renamingTo: nextName) else { return nil }
        let kept: KeptSession
        switch taken.flatMap(KeptSession.parse) {
        case .failure(let refusal):
            table.logger.warning("a session kept in --session-dir was not restored: its file is not a session's (\(refusal))")
            folder.remove(nextName)
            return nil
        case .success(let read):
            kept = read
        }
        guard kept.origin == origin else {
            folder.remove(nextName)
            return nil
        }
        let resumption = Resumption(grace: grace, maxBytes: table.resumeBufferBytes, restoredAt: received, received: kept.received)
        let session = make(resumption)
        session.core.recorder?.addComment(
            "This session was made again after a restart of the server, from --session-dir: its view-models were made from the kept screens before the first line here, so this file alone does not replay it (the recording of the session before the restart holds how they were made).")
        session.host.keepsScreens = true
        for problem in session.host.restoreScreens(kept.screens) {
            table.logger.warning("session \(session.id), restored after a restart: \(problem)")
        }
        let screens = KeptScreens(folder: folder, token: next)
        session.kept = screens
        session.resumeToken = next
        table.resumeTokens[next] = session
        let link = session.resume(on: channel, received: received, token: next)
        session.saveScreens()
        table.logger.debug("session \(session.id) restored after a restart")
        return (session, link)
    }
}
#endif

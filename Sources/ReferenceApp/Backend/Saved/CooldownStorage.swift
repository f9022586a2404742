import VMHost

/// Where the SMS countdowns are kept between runs (the app's state directory), so that a restart
/// does not allow an immediate resend to a phone still waiting.
///
/// Deadlines are wall-clock times (``VMHostRuntime/HostClock/wallTime``, since the Unix epoch):
/// the only time two processes share. Implementations report their own failures in the logs.
@HostActor
public protocol CooldownStorage: AnyObject {
    /// The saved deadline of each phone still waiting (or that was, when saved).
    func savedCooldowns() -> [String: Duration]
    /// Saves the deadlines, replacing the ones saved before, in one atomic write.
    func saveCooldowns(_ deadlines: [String: Duration])
}

/// The SMS countdowns of the processes that serve one app at once (the workers of one
/// `vmhost-web`): each phone's deadline in wall-clock time, read at every check and written at
/// every send, so that a page served by one process sees a code sent through another at once.
///
/// Implementations keep at most a fixed number of phones (a send beyond forgets the earliest
/// deadline) and may keep none for a phone too long to be a valid one: they only ever hold back
/// a send for longer than a process alone would, never for less.
@HostActor
public protocol SharedCooldowns: AnyObject {
    /// The deadline kept for `phone`, if any (it may have passed).
    func deadline(of phone: String) -> Duration?
    /// Keeps `deadline` for `phone`, unless a later one is kept already.
    func keep(_ deadline: Duration, for phone: String)
}

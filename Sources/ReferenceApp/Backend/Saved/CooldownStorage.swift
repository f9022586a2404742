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

import Testing

/// Every Login suite, run one test at a time.
///
/// The wire suite moves a manual clock through the host (`control.clock.advance`), whose
/// synchronous advance waits on the host thread for every task in transit, process-wide; run beside
/// view-model tests that suspend on the same thread it could wait for them, so nothing overlaps here.
@Suite(.serialized) enum LoginSuites {}

import Testing

/// Every ProductList suite, run one test at a time.
///
/// The wire suite moves the manual clock through the host (`control.clock.advance`), whose
/// synchronous advance waits on the host thread for tasks in transit process-wide; view-model tests
/// suspended on the same thread must not overlap it.
@Suite(.serialized) enum ProductListSuites {}

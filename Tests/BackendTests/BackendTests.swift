import Testing
@testable import Backend

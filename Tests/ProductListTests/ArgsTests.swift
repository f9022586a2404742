@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// `{pageSize?: 1…100 = 20}`; anything else fails naming `params.args.pageSize`.
    @Suite
    struct ArgsTests {
        func read(_ args: JSON?) throws(JSONDecodingError) -> ProductListViewModel.Args {
            try ProductListViewModel.Args(json: args ?? .null, path: "params.args")
        }

        @Test func defaultsToTwenty() throws {
            #expect(try read(nil).pageSize == 20)
            #expect(try read([:]).pageSize == 20)
            #expect(try read(["pageSize": .null]).pageSize == 20)
        }

        @Test(arguments: [1, 20, 57, 100])
        func acceptsOneToAHundred(size: Int) throws {
            #expect(try read(["pageSize": JSON(size)]).pageSize == size)
        }

        @Test(arguments: [
            (JSON.int(0), "params.args.pageSize: must be between 1 and 100, got 0"),
            (.int(101), "params.args.pageSize: must be between 1 and 100, got 101"),
            (.int(-5), "params.args.pageSize: must be between 1 and 100, got -5"),
            (.string("20"), "params.args.pageSize: expected an integer, got a string"),
            (.double(2.5), "params.args.pageSize: expected an integer, got a fractional number"),
            (.bool(true), "params.args.pageSize: expected an integer, got a boolean"),
        ])
        func rejectsAnythingElseNamingIt(value: JSON, message: String) {
            #expect(throws: JSONDecodingError.self) { try read(["pageSize": value]) }
            do {
                _ = try read(["pageSize": value])
            } catch {
                #expect(error.description == message)
            }
        }

        @Test func rejectsUnknownMembers() {
            do {
                _ = try read(["pagesize": 10])
                Issue.record("accepted a typo")
            } catch {
                #expect(error.path == "params.args.pagesize")
            }
        }
    }
}

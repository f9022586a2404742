import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// Extreme values from the backend through a ProductList on a host (issue of traps on backend
    /// data): each is a `decode` failure naming the member, or shown as backend.md says; the host
    /// keeps serving.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct HostileBodyTests {
        static func body(index: String = "1", rate: String = "4.35") -> String {
            #"{"success":true,"code":"0","message":"ok","data":[{"id":"p1","name":"n","bank":"b","annualRate":"#
                + rate + #","saleStatus":"onSale","termDays":90,"minAmount":50000}],"page":{"index":"# + index
                + #","size":20,"total":100}}"#
        }

        func host(_ body: String) async -> InProcessConnection {
            let client = InProcessConnection(kinds: [ProductListViewModel.factory(api: RawBodyAPI(body))])
            await client.request("vm.create", ["kind": "ProductList", "id": "pl"])
            await client.request("vm.subscribe", ["vm": "pl"])
            return client
        }

        @Test(arguments: ["1e17", "-1e17", "1e300"])
        func anAnnualRateOutOfRangeFailsTheRefreshAsDecode(rate: String) async {
            let client = await host(Self.body(rate: rate))
            let reply = await client.request("vm.send", ["vm": "pl", "input": "refresh"])
            #expect(reply.errorCode == -32004)
            #expect(reply.error?["data"]?["kind"] == "decode")
            #expect(reply.error?["data"]?["detail"] == "data[0]: product.annualRate: out of range (must be between -1000000.0 and 1000000.0)")
            #expect(reply.events.first?["name"] == "error")
            #expect(await client.request("vm.get", ["vm": "pl", "outputs": ["items", "isRefreshing"]]).result
                == ["values": ["items": [], "isRefreshing": false]])
            #expect(await client.request("ping").result == [:])
            await client.finish()
        }

        @Test(arguments: ["4611686018427387904", "9223372036854775807"])
        func aHugePageIndexShowsThePageWithNoMoreToLoad(index: String) async {
            let client = await host(Self.body(index: index))
            #expect(await client.request("vm.send", ["vm": "pl", "input": "refresh"]).result == [:])
            let values = await client.request("vm.get", ["vm": "pl", "outputs": ["hasMore", "page"]]).result
            #expect(values == ["values": ["hasMore": false, "page": 1]])
            #expect(await client.request("vm.send", ["vm": "pl", "input": "loadMore"]).errorCode == -32003)
            await client.finish()
        }

        @Test func aNegativePageIndexFailsAsDecodeNamingIt() async {
            let client = await host(Self.body(index: "-9223372036854775808"))
            let reply = await client.request("vm.send", ["vm": "pl", "input": "refresh"])
            #expect(reply.error?["data"]?["detail"] == "page.index: out of range (must be at least 1)")
            await client.finish()
        }
    }
}

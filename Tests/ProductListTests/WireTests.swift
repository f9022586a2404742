import Backend
@_spi(Transport) import VMHostEventLoop
import ProductList
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire

extension ProductListSuites {
    /// The product list over the wire, in-process, on the embedded backend and a manual clock: exact
    /// message sequences for loading, cancelling by `$/cancelRequest`, `vm.dispose` and the `cancel`
    /// input, every failure kind, English, describe and args.
    @Suite(.timeLimit(.minutes(1)))
    @HostActor
    struct WireTests {
        @Test func firstLoadAndThreePagesToTheEnd() async throws {
            let wire = WireHarness(latencyMs: 100)
            await wire.open()
            let client = wire.client

            #expect(await client.start("vm.send", WireHarness.send("refresh"), id: "r1") == [Message.changed(["isRefreshing": true, "loadState": "loading"])])
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...20), "page": 1, "isRefreshing": false, "loadState": "loaded"]),
                Message.result("r1", [:])
            ])

            #expect(await client.start("vm.send", WireHarness.send("loadMore"), id: "m2") == [Message.changed(["isLoadingMore": true, "loadState": "loading"])])
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...40), "page": 2, "isLoadingMore": false, "loadState": "loaded"]),
                Message.result("m2", [:])
            ])

            #expect(await client.start("vm.send", WireHarness.send("loadMore"), id: "m3") == [Message.changed(["isLoadingMore": true, "loadState": "loading"])])
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...57), "page": 3, "hasMore": false, "isLoadingMore": false, "loadState": "loaded"]),
                Message.result("m3", [:])
            ])

            let refused = await client.request("vm.send", WireHarness.send("loadMore"), id: "m4")
            #expect(refused.messages == [[
                "jsonrpc": "2.0", "id": "m4",
                "error": [
                    "code": -32003, "message": "Input \"loadMore\" is disabled: no more pages",
                    "data": ["input": "loadMore", "reason": "no more pages"],
                ],
            ]])
            await wire.client.finish()
        }

        @Test func cancelRequestCancelsTheFetch() async throws {
            let wire = WireHarness(latencyMs: 1000)
            await wire.open()
            let client = wire.client

            #expect(await client.start("vm.send", WireHarness.send("refresh"), id: "r1") == [Message.changed(["isRefreshing": true, "loadState": "loading"])])
            #expect(wire.clock.pendingCount == 1)
            #expect(await client.notify("$/cancelRequest", ["id": "r1"]) == [
                Message.changed(["isRefreshing": false, "loadState": "idle"]),
                Message.cancelled("r1"),
            ])
            // The backend's wait was cancelled with the request: nothing is left to fire.
            #expect(wire.clock.pendingCount == 0)
            #expect(await wire.advance(ms: 5000) == [])
            #expect(await client.request("vm.get", ["vm": "pl"]).result?["values"] == [
                "items": [], "page": 0, "hasMore": true, "isRefreshing": false, "isLoadingMore": false, "isEmpty": false,
                "isStale": false, "loadState": "idle", "lastError": nil,
            ])
            await wire.client.finish()
        }

        @Test func cancelRequestCancelsALoadMore() async throws {
            let wire = WireHarness(latencyMs: 1000)
            await wire.open()
            let client = wire.client
            _ = await client.start("vm.send", WireHarness.send("refresh"), id: "r1")
            _ = await wire.advance(ms: 1000)

            #expect(await client.start("vm.send", WireHarness.send("loadMore"), id: "m1") == [Message.changed(["isLoadingMore": true, "loadState": "loading"])])
            #expect(await client.notify("$/cancelRequest", ["id": "m1"]) == [
                Message.changed(["isLoadingMore": false, "loadState": "loaded"]),
                Message.cancelled("m1"),
            ])
            #expect(wire.clock.pendingCount == 0)
            #expect(await wire.advance(ms: 5000) == [])
            let values = await client.request("vm.get", ["vm": "pl", "outputs": ["items", "page"]]).result?["values"]
            #expect(values == ["items": Expect.cells(1...20), "page": 1])
            await wire.client.finish()
        }

        @Test func disposeCancelsTheFetch() async throws {
            let wire = WireHarness(latencyMs: 1000)
            await wire.open()
            let client = wire.client

            #expect(await client.start("vm.send", WireHarness.send("loadMore"), id: "m1") == [Message.changed(["isLoadingMore": true, "loadState": "loading"])])
            #expect(await client.request("vm.dispose", ["vm": "pl"], id: "d1").messages == [
                Message.changed(["isLoadingMore": false, "loadState": "idle"]),
                Message.cancelled("m1"),
                Message.result("d1", [:]),
            ])
            #expect(wire.clock.pendingCount == 0)
            #expect(await wire.advance(ms: 5000) == [])
            #expect(await client.request("vm.list", id: "l1").result == [])
            await wire.client.finish()
        }

        @Test func theCancelInputCancelsTheFetch() async throws {
            let wire = WireHarness(latencyMs: 1000)
            await wire.open()
            let client = wire.client

            #expect(await client.start("vm.send", WireHarness.send("refresh"), id: "r1") == [Message.changed(["isRefreshing": true, "loadState": "loading"])])
            #expect(await client.request("vm.send", WireHarness.send("cancel"), id: "c1").messages == [
                Message.changed(["isRefreshing": false, "loadState": "idle"]),
                Message.cancelled("r1"),
                Message.result("c1", [:]),
            ])
            #expect(wire.clock.pendingCount == 0)
            #expect(await wire.advance(ms: 5000) == [])
            await wire.client.finish()
        }

        @Test func refreshDuringLoadMore() async throws {
            let wire = WireHarness(latencyMs: 100)
            await wire.open()
            let client = wire.client
            _ = await client.start("vm.send", WireHarness.send("refresh"), id: "r1")
            _ = await wire.advance(ms: 100)

            #expect(await client.start("vm.send", WireHarness.send("loadMore"), id: "m1") == [Message.changed(["isLoadingMore": true, "loadState": "loading"])])
            // The load-more is cancelled as the refresh starts, before its spinner shows: a client
            // never sees both spinners at once.
            #expect(await client.start("vm.send", WireHarness.send("refresh"), id: "r2") == [
                Message.changed(["isLoadingMore": false]),
                Message.cancelled("m1"),
                // Still `loading`: the refresh took over in the same turn.
                Message.changed(["isRefreshing": true]),
            ])
            // Only the refresh's fetch is left; it replaces page 1 with page 1: no item changes.
            #expect(wire.clock.pendingCount == 1)
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["isRefreshing": false, "loadState": "loaded"]),
                Message.result("r2", [:])
            ])
            await wire.client.finish()
        }

        /// Each scripted outcome, how long it takes on the clock, and the error it must produce: the
        /// message the user reads (zh-Hans) and the detail (nil where the text comes from the JSON parser).
        nonisolated static let failures: [(outcome: String, waitMs: Int, kind: String, code: JSON, message: String, detail: String?)] = [
            ("network", 100, "network", nil, "网络连接失败，请检查网络后重试", "could not connect to the server"),
            ("timeout", 15000, "timeout", nil, "请求超时，请稍后重试", "the request timed out"),
            ("http:404", 100, "server", 404, "服务器错误（404），请稍后重试", "the server answered HTTP 404"),
            ("http:500", 100, "server", 500, "服务器错误（500），请稍后重试", "the server answered HTTP 500"),
            ("business:1009:系统繁忙", 100, "business", "1009", "系统繁忙", #"the server reported failure code "1009""#),
            ("malformed", 100, "decode", nil, "服务器返回的数据无法识别，请稍后重试", nil),
        ]

        @Test(arguments: failures)
        func everyFailureKindOnTheWire(
            failure: (outcome: String, waitMs: Int, kind: String, code: JSON, message: String, detail: String?)
        ) async throws {
            let wire = WireHarness(latencyMs: 100)
            await wire.open()
            let client = wire.client
            _ = await client.start("vm.send", WireHarness.send("refresh"), id: "r1")
            _ = await wire.advance(ms: 100)

            // Both commands fail into the one `error` channel; the list stays as it was.
            var lastError: JSON = nil
            for input in ["loadMore", "refresh"] {
                try wire.backend.script(endpoint: "products", outcomes: [failure.outcome])
                let flag = input == "refresh" ? "isRefreshing" : "isLoadingMore"
                let id = JSON.string("\(input)-\(failure.outcome)")
                // From `loaded` (the first command) or `failed` (the second) to `loading`.
                #expect(await client.start("vm.send", WireHarness.send(input), id: id) == [Message.changed([flag: true, "loadState": "loading"])])
                let messages = await wire.advance(ms: failure.waitMs)
                let error = messages.count == 3 ? messages[1]["params"]?["value"] : nil
                lastError = error ?? nil
                #expect(error?["kind"] == .string(failure.kind))
                #expect(error?["code"] == failure.code)
                #expect(error?["input"] == .string(input))
                #expect(error?["message"] == .string(failure.message))
                if let detail = failure.detail { #expect(error?["detail"] == .string(detail)) }
                #expect(error?["detail"]?.stringValue?.isEmpty == false)
                // The state a late subscriber reads changes with the flag, before the event.
                #expect(messages == [
                    Message.changed(["lastError": error ?? nil, flag: false, "loadState": "failed"]),
                    Message.event("error", error ?? nil),
                    Message.failed(id, error ?? nil),
                ])
            }
            let values = await client.request("vm.get", ["vm": "pl"]).result?["values"]
            #expect(values == [
                "items": Expect.cells(1...20), "page": 1, "hasMore": true, "isRefreshing": false, "isLoadingMore": false,
                "isEmpty": false, "isStale": false, "loadState": "failed", "lastError": lastError,
            ])
            await wire.client.finish()
        }

        @Test func englishCells() async throws {
            let wire = WireHarness(latencyMs: 100)
            await wire.open(locale: "en")
            #expect(await wire.client.start("vm.send", WireHarness.send("refresh"), id: "r1") == [
                Message.changed(["isRefreshing": true, "loadState": "loading"]),
            ])
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...20, locale: .en), "page": 1, "isRefreshing": false, "loadState": "loaded"]),
                Message.result("r1", [:]),
            ])
            let first = Expect.cells(1...20, locale: .en).arrayValue?.first
            #expect(first == [
                "id": "p001", "name": "Steady Growth 1", "bank": "CMB", "profit": "4.35%", "saleStatus": "On sale",
                "saleStatusCode": "onSale", "term": "90 days", "amount": "¥50,000",
            ])
            await wire.client.finish()
        }

        @Test func describeListsTheKindWithSchemas() async throws {
            let wire = WireHarness()
            let kind = await wire.client.request("host.describe", ["kind": "ProductList"]).result?["kinds"]?.arrayValue?.first
            #expect(kind?["kind"] == "ProductList")
            #expect(kind?["args"] == [
                "type": "object",
                "properties": ["pageSize": ["type": "integer", "minimum": 1, "maximum": 100, "default": 20]],
                "additionalProperties": false,
            ])
            #expect(kind?["inputs"] == [
                ["name": "refresh", "kind": "command", "value": ["type": "null"], "policy": "latest"],
                ["name": "loadMore", "kind": "command", "value": ["type": "null"], "policy": "ignore"],
                ["name": "cancel", "kind": "trigger", "value": ["type": "null"]],
            ])
            let outputs = kind?["outputs"]?.arrayValue ?? []
            #expect(outputs.map { $0["name"] } == [
                "items", "page", "hasMore", "isRefreshing", "isLoadingMore", "isEmpty", "isStale", "loadState", "lastError", "error",
            ])
            #expect(outputs.map { $0["kind"] } == [
                "property", "property", "property", "property", "property", "property", "property", "property", "property",
                "event",
            ])
            let string: JSON = ["type": "string"]
            let cell: JSON = [
                "type": "object",
                "properties": [
                    "id": string, "name": string, "bank": string, "profit": string, "saleStatus": string,
                    "saleStatusCode": ["type": "string", "enum": ["onSale", "soldOut", "upcoming"]], "term": string, "amount": string,
                ],
                "required": ["id", "name", "bank", "profit", "saleStatus", "saleStatusCode", "term", "amount"],
                "additionalProperties": false,
            ]
            #expect(outputs[0]["schema"] == ["type": "array", "items": cell])
            #expect(outputs[1]["schema"] == ["type": "integer"])
            #expect(outputs[2]["schema"] == ["type": "boolean"])
            #expect(outputs[6]["schema"] == ["type": "boolean"])
            #expect(outputs[7]["schema"] == ["type": "string", "enum": ["idle", "loading", "loaded", "empty", "failed"]])
            // The error object, its `kind` one of the backend's (the host's configured error kinds).
            #expect(outputs[9]["schema"] == DomainError.jsonSchema(kinds: BackendError.kindNames))
            #expect(BackendError.kindNames == ["network", "timeout", "server", "business", "decode", "unauthorized"])
            await wire.client.finish()
        }

        @Test(arguments: [
            (JSON.int(0), "params.args.pageSize: must be between 1 and 100, got 0"),
            (.int(101), "params.args.pageSize: must be between 1 and 100, got 101"),
            (.string("ten"), "params.args.pageSize: expected an integer, got a string"),
        ])
        func badPageSizeIsRefusedNamingIt(value: JSON, problem: String) async throws {
            let wire = WireHarness()
            let reply = await wire.client.request("vm.create", ["kind": "ProductList", "args": ["pageSize": value]])
            #expect(reply.errorCode == -32602)
            #expect(reply.error?["message"]?.stringValue?.hasSuffix(problem) == true)
            #expect(await wire.client.request("vm.list").result == [])
            await wire.client.finish()
        }

        @Test func pageSizeIsUsedOnTheWire() async throws {
            let wire = WireHarness(latencyMs: 100)
            await wire.open(args: ["pageSize": 50])
            _ = await wire.client.start("vm.send", WireHarness.send("refresh"), id: "r1")
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...50), "page": 1, "isRefreshing": false, "loadState": "loaded"]), Message.result("r1", [:]),
            ])
            _ = await wire.client.start("vm.send", WireHarness.send("loadMore"), id: "m1")
            #expect(await wire.advance(ms: 100) == [
                Message.changed(["items": Expect.cells(1...57), "page": 2, "hasMore": false, "isLoadingMore": false, "loadState": "loaded"]),
                Message.result("m1", [:]),
            ])
            await wire.client.finish()
        }
    }
}

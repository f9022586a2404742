@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// SPEC §3 (`initialize {locale}`) and §9 (the manual clock's ceiling), exactly as written.
@Suite("Host limits")
struct HostLimitTests {
    @Test(arguments: [
        ("en", "en"), ("EN", "en"), ("en-US", "en"), ("en-GB", "en"), ("en-Latn-US", "en"), ("En-us", "en"),
        ("zh", "zh-Hans"), ("zh-CN", "zh-Hans"), ("zh-Hans", "zh-Hans"), ("zh-hans-cn", "zh-Hans"), ("zh-Hant-TW", "zh-Hans"),
    ])
    func aLanguageTagOfEnglishOrChineseIsAccepted(tag: String, locale: String) async {
        let client = await bilingualHost()
        #expect(await client.request("initialize", ["locale": .string(tag)]).result?["locale"] == .string(locale))
    }

    @Test(arguments: ["en_US", "zh_CN", "en-", "-en", "en--US", "", "english", "eng", "fr", "de-DE", "en US", "en-abcdefghi", "zh-Hans_CN", "én"])
    func anythingElseIsInvalidParamsNamingTheLocale(tag: String) async {
        let client = await bilingualHost()
        let reply = await client.request("initialize", ["locale": .string(tag)])
        #expect(reply.errorCode == -32602, "\(tag)")
        #expect(reply.error?["message"]?.stringValue?.hasPrefix("Invalid params: params.locale: unsupported locale") == true
            || reply.error?["message"]?.stringValue?.contains("params.locale") == true)
        // The locale stays what it was.
        #expect(await client.request("initialize").result?["locale"] == "zh-Hans")
    }

    /// A host whose app offers Simplified Chinese (its default) and English.
    @HostActor
    private func bilingualHost() -> InProcessConnection {
        InProcessConnection(configuration: .init(
            clock: ManualClock(), factories: [], testControls: true, defaultLocale: "zh-Hans", locales: ["zh-Hans", "en"]))
    }

    @Test func theClockAdvancesToItsCeilingAndNoFurther() async {
        let client = await InProcessConnection(kinds: [])
        let ceiling = ManualClock.ceilingMilliseconds
        #expect(await client.request("control.clock.advance", ["ms": 10_000_000_000_000]).errorCode == -32602)
        #expect(await client.request("control.clock.advance", ["ms": .int(Int64.max)]).errorCode == -32602)
        #expect(await client.request("control.clock.advance", ["ms": 1000]).result == ["now": 1000])
        let refused = await client.request("control.clock.advance", ["ms": .int(ceiling)])
        #expect(refused.errorCode == -32602)
        #expect(refused.error?["message"]?.stringValue?.contains("params.ms") == true)
        #expect(await client.request("control.clock.advance", ["ms": .int(ceiling - 1000)]).result == ["now": .int(ceiling)])
        for _ in 0..<1001 {
            #expect(await client.request("control.clock.advance", ["ms": .int(Int64.max)]).errorCode == -32602)
        }
        #expect(await client.request("control.clock.advance", ["ms": 0]).result == ["now": .int(ceiling)])
        #expect(await client.request("control.clock.advance", ["ms": 1]).errorCode == -32602)
        #expect(await client.request("ping").result == [:])
    }
}

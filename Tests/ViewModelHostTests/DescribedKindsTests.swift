import Backend
import BackendTesting
import Login
import MenuGroups
import ProductList
import Testing
import VMHostTesting

/// What `host.describe` says each input accepts is what it accepts, and what it says it refuses is
/// refused, for every kind the host serves: the reference app's (as `vmhost` registers them) and
/// the test kit's.
@Suite("Described kinds")
@HostActor
struct DescribedKindsTests {
    @Test func everyServedKindAcceptsExactlyWhatItDescribes() {
        let api = StubAPI()
        let kinds = [
            ProductListViewModel.factory(api: api),
            LoginViewModel.factory(api: api),
            MenuSubGroupViewModel.factory(api: api),
            MenuEditGroupViewModel.factory(api: api),
            SessionViewModel.factory(session: AppSession()),
            ProbeViewModel.factory(),
        ]
        #expect(DescribedKindCheck.problems(kinds: kinds) == [])
        #expect(api.calls.isEmpty)
    }

    @Test func aTriggerWithAValueDescribesItsValueType() async {
        let client = InProcessConnection(kinds: [ProbeViewModel.factory()])
        let reply = await client.request("host.describe", ["kind": "Probe"])
        let inputs = reply.result?["kinds"]?.arrayValue?.first?["inputs"]?.arrayValue ?? []
        let append = inputs.first { $0["name"] == "append" }
        #expect(append?["value"] == ["type": "array", "items": ["type": "string"]])
        let bump = inputs.first { $0["name"] == "bump" }
        #expect(bump?["value"] == ["type": "object"])
    }

    @Test func aRefusedValueIsInvalidParamsNamingTheMember() async {
        let client = InProcessConnection(kinds: [MenuSubGroupViewModel.factory(api: StubAPI())])
        await client.request("vm.create", ["kind": "MenuSubGroup", "args": ["menuUid": "m1"], "id": "g"])
        let reply = await client.request("vm.send", ["vm": "g", "input": "rename", "value": ["groupId": "g9"]])
        #expect(reply.errorCode == -32602)
        #expect(reply.error?["message"] == "Invalid params: params.value.groupId: no group \"g9\" in the list (groups: none)")
    }
}

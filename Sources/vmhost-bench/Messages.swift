/// The messages the JSON micro-benchmarks parse and write: what the host really reads and writes
/// most (a `vm.send` request, a `vm.subscribe` reply, a one-property `vm.changed`) and one large
/// notification (a ProductList page of 20 cells in one `vm.changed`).
enum Messages {
    struct Sample {
        var name: String
        var text: String
        var bytes: [UInt8] { Array(text.utf8) }
    }

    static let request = Sample(
        name: "request",
        text: #"{"jsonrpc":"2.0","id":42,"method":"vm.send","params":{"vm":"login","input":"username","value":"13800138000"}}"#)

    static let response = Sample(
        name: "response",
        text: ##"{"jsonrpc":"2.0","id":2,"result":{"subscription":"s1","values":{"mode":"password","codeTabColor":"#212121","passwordTabColor":"#1E88E5","hideCodeLine":true,"hideCodeContainer":true,"hidePasswordLine":false,"hidePasswordContainer":false,"usernameValid":false,"passwordValid":false,"phoneValid":false,"codeValid":false,"canSubmit":false,"canSendCode":false,"countdown":0,"sendCodeTitle":"获取验证码","isSubmitting":false,"failureMessage":null}}}"##)

    static let changed = Sample(
        name: "vm.changed",
        text: #"{"jsonrpc":"2.0","method":"vm.changed","params":{"subscription":"s1","vm":"login","values":{"usernameValid":true}}}"#)

    static let page = Sample(name: "vm.changed page of 20", text: pageText)

    static let all = [request, response, changed, page]

    static let series = ["稳健增利", "安心盈", "天天宝", "季季红", "月月享", "年年丰"]
    static let banks = ["招商银行", "工商银行", "建设银行", "农业银行", "中国银行", "交通银行", "浦发银行", "兴业银行"]

    /// 20 product cells as the host writes them (`protocol/backend.md`, the demo rule).
    static var pageText: String {
        var cells: [String] = []
        for i in 20..<40 {
            let n = i + 1
            let rate = 300 + (135 + 37 * i) % 200
            let cents = rate % 100 < 10 ? "0\(rate % 100)" : "\(rate % 100)"
            let status = ["在售", "在售", "在售", "已售罄", "即将发售"][i % 5]
            let days = [90, 180, 365, 30][i % 4]
            let amount = ["¥50,000", "¥10,000", "¥1,000"][i % 3]
            let id = n < 100 ? "p0\(n)" : "p\(n)"
            cells.append(
                #"{"id":"\#(id)","name":"\#(series[i % 6])\#(n)号","bank":"\#(banks[i % 8])","profit":"\#(rate / 100).\#(cents)%","saleStatus":"\#(status)","term":"\#(days)天","amount":"\#(amount)"}"#)
        }
        return #"{"jsonrpc":"2.0","method":"vm.changed","params":{"subscription":"s1","vm":"pl","values":{"items":["#
            + cells.joined(separator: ",") + #"],"page":2,"isLoadingMore":false}}}"#
    }
}

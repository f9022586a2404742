content-length: 40
Content-Type: application/vscode-jsonrpc; charset=utf-8

{"jsonrpc":"2.0","method":"ping","id":1}CONTENT-LENGTH:40

{"jsonrpc":"2.0","method":"ping","id":2}Content-Length: abc

Content-Length: -5

Content-Length: 99999999999999999999999

X-Only: 1

no colon here



Content-Length: 0

Content-Length: 40

{"jsonrpc":"2.0","method":"ping","id":3}
Content-Length: 59

{"jsonrpc":"2.0","method":"echo","id":1,"params":{"k":"v"}}Content-Length: 41

{"jsonrpc":"2.0","method":"later","id":2}Content-Length: 69

{"jsonrpc":"2.0","method":"$/cancelRequest","id":3,"params":{"id":2}}Content-Length: 40

{"jsonrpc":"2.0","method":"nope","id":4}
 
	Content-Length: 40

{"jsonrpc":"2.0","method":"ping","id":1}Content-Length: 41

{"jsonrpc":"2.0","method":"later","id":2}
// The todo app served to browsers: the same server as todo-host's (TodoKinds), over WebSocket at
// /rpc, the folder of --static at /. The transport owns the command line (`--listen`, `--workers`,
// `--static`, `--token`, `--allow-origin`, the limits, and the app's own options), the workers,
// signals and the logs.
import TodoKinds
import VMHostWebSocket

await WebSocketServer(TodoServer.server, command: "todo-web").run()

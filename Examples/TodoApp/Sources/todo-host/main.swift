// The todo app's executable: its server (TodoKinds) on stdio. The framework's server owns the
// command line, framing, signals, the trace and the logs.
import TodoKinds

TodoServer.server.run()

// The chat app's executable: its kinds served on stdio, calling the chat server.
import ChatKinds

ChatServer.server.run()

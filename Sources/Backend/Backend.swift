// The backend layer: see protocol/backend.md.

import Backend

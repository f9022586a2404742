// vmhost-fuzz-backend: a libFuzzer target over the backend's response path: the bytes of a body →
// its envelope (``ErrorMapping``) → the models of every endpoint → a ProductList applying a page.
// Every input goes through ``BackendFuzzing/check(_:)``, whose preconditions are the invariants; a
// crash is a trap on backend data, a failed invariant or a memory error. How it is built and run
// (fuzzing, or replaying files such as Tests/Hardening/backend-corpus): ``FuzzDriver``.
import FuzzSupport

FuzzDriver.main(name: "vmhost-fuzz-backend", check: BackendFuzzing.check)

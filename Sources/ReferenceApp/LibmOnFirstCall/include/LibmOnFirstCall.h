// Nothing to import: the target defines the C math functions the Swift standard library calls
// (LibmOnFirstCall.c says why); linking it is its whole use.

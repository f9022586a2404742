// Nothing to import: the target defines the command line the Swift standard library reads
// (ProcessArguments.c says why); linking it is its whole use.

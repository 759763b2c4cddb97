// The fault-injecting proxy is a module of its own (Tests/FaultProxy), so that a benchmark can
// use it without the test kit; every test that imports the kit has it as before.
@_exported import EventualFaultProxy

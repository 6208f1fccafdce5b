package proxy

// canSplice: net.TCPConn's ReadFrom from another TCP connection is
// splice(2) here.
const canSplice = true

package livestream

// RedactText is redactText for the tests.
var RedactText = redactText

// ErrDied makes a Worker stop as if killed.
var ErrDied = errDied

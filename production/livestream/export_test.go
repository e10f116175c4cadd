package livestream

var (
	Redact     = redact
	RedactText = redactText
)

// ErrDied makes a Worker stop as if killed.
var ErrDied = errDied

package livestream

var (
	Redact     = redact
	RedactText = redactText
)

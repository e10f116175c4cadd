package audio

// Span is a range of frames [Start, End) from the start of a stream: the
// module's one way to say where something is in a recording (speech for
// the loudness meter, what a cut keeps, a detected breath, a phrase of a
// test signal).
type Span struct {
	Start, End int64 // frames, End exclusive
}

// Len is the number of frames in the span.
func (s Span) Len() int64 { return s.End - s.Start }

package audio

// Buffer holds planar audio: b[c][i] is frame i of channel c, nominal range
// [-1, 1]. Every channel has the same length.
type Buffer [][]float64

// NewBuffer allocates a zeroed Buffer of the given shape in one allocation
// for the samples.
func NewBuffer(channels, frames int) Buffer {
	b := make(Buffer, channels)
	backing := make([]float64, channels*frames)
	for c := range b {
		b[c] = backing[c*frames : (c+1)*frames : (c+1)*frames]
	}
	return b
}

// Channels returns the number of channels.
func (b Buffer) Channels() int { return len(b) }

// Frames returns the number of frames (the length of each channel).
func (b Buffer) Frames() int {
	if len(b) == 0 {
		return 0
	}
	return len(b[0])
}

// Slice returns the frames [from, to) as a Buffer that shares b's memory.
// Slicing into a caller-owned header avoids allocation: see SliceInto.
func (b Buffer) Slice(from, to int) Buffer {
	s := make(Buffer, len(b))
	return b.SliceInto(s, from, to)
}

// SliceInto writes the frames [from, to) of b into the header dst (which must
// have len(b) channels) and returns it; no sample memory is copied or allocated.
func (b Buffer) SliceInto(dst Buffer, from, to int) Buffer {
	for c := range b {
		dst[c] = b[c][from:to]
	}
	return dst
}

// Zero sets every sample to 0.
func (b Buffer) Zero() {
	for _, ch := range b {
		clear(ch)
	}
}

// CopyFrom copies min(b.Frames(), src.Frames()) frames from src and returns
// that count. Both must have the same channel count.
func (b Buffer) CopyFrom(src Buffer) int {
	n := 0
	for c := range b {
		n = copy(b[c], src[c])
	}
	return n
}

// Clone returns a deep copy of b.
func (b Buffer) Clone() Buffer {
	out := NewBuffer(len(b), b.Frames())
	out.CopyFrom(b)
	return out
}

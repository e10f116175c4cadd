package id3

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf16"
)

// Text encodings of ID3v2 text fields.
const (
	encLatin1  = 0
	encUTF16   = 1 // with a byte order mark
	encUTF16BE = 2
	encUTF8    = 3
)

// splitText splits p at the first terminator of text encoding enc (one NUL
// byte, or two aligned NUL bytes for UTF-16).
func splitText(enc byte, p []byte) (text, rest []byte) {
	if enc == encUTF16 || enc == encUTF16BE {
		for i := 0; i+1 < len(p); i += 2 {
			if p[i] == 0 && p[i+1] == 0 {
				return p[:i], p[i+2:]
			}
		}
		return p, nil
	}
	if i := bytes.IndexByte(p, 0); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, nil
}

// decodeText decodes one string in ID3 text encoding enc: 0 Latin-1,
// 1 UTF-16 with BOM, 2 UTF-16BE, 3 UTF-8.
func decodeText(enc byte, p []byte) string {
	switch enc {
	case encUTF16, encUTF16BE:
		be := enc == encUTF16BE
		if len(p) >= 2 && p[0] == 0xFF && p[1] == 0xFE {
			be, p = false, p[2:]
		} else if len(p) >= 2 && p[0] == 0xFE && p[1] == 0xFF {
			be, p = true, p[2:]
		}
		u := make([]uint16, len(p)/2)
		for i := range u {
			if be {
				u[i] = binary.BigEndian.Uint16(p[2*i:])
			} else {
				u[i] = binary.LittleEndian.Uint16(p[2*i:])
			}
		}
		return strings.TrimRight(string(utf16.Decode(u)), "\x00")
	case encUTF8:
		return strings.ToValidUTF8(strings.TrimRight(string(p), "\x00"), "\uFFFD")
	}
	return latin1(p)
}

func latin1(p []byte) string {
	r := make([]rune, 0, len(p))
	for _, b := range p {
		if b == 0 {
			break
		}
		r = append(r, rune(b))
	}
	return string(r)
}

// unsync undoes ID3 unsynchronisation: every 0xFF 0x00 becomes 0xFF.
func unsync(p []byte) []byte {
	if !bytes.Contains(p, []byte{0xFF, 0x00}) {
		return p
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		out = append(out, p[i])
		if p[i] == 0xFF && i+1 < len(p) && p[i+1] == 0 {
			i++
		}
	}
	return out
}

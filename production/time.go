package production

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Time is a timestamp in the API's format: UTC, YYYY-MM-DDThh:mm:ss with a
// .fff millisecond fraction only when it is not zero, and a trailing Z. The
// zero Time marshals as null.
type Time struct{ time.Time }

// Now returns the current time truncated to the API's millisecond precision.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Millisecond)} }

const (
	timeLayout   = "2006-01-02T15:04:05"
	timeLayoutMS = "2006-01-02T15:04:05.000"
)

// String formats t as the API does, or "" for the zero Time.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	u := t.UTC().Truncate(time.Millisecond)
	if u.Nanosecond() == 0 {
		return u.Format(timeLayout) + "Z"
	}
	return u.Format(timeLayoutMS) + "Z"
}

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.String())
}

// UnmarshalJSON accepts null, the API's format with or without the Z and
// with any number of fraction digits, and RFC 3339 with an offset (converted
// to UTC).
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "non-string", Type: timeType}
	}
	p, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = p
	return nil
}

var timeType = jsonType[Time]()

// ParseTime parses a timestamp in the formats UnmarshalJSON accepts; "" is
// the zero Time.
func ParseTime(s string) (Time, error) {
	if s == "" {
		return Time{}, nil
	}
	if strings.HasSuffix(s, "Z") || !hasOffset(s) {
		v, err := time.Parse("2006-01-02T15:04:05.999999999", strings.TrimSuffix(s, "Z"))
		if err != nil {
			return Time{}, fmt.Errorf("%w: timestamp %q is not YYYY-MM-DDThh:mm:ss[.fff]Z", ErrInvalid, s)
		}
		return Time{v.UTC().Truncate(time.Millisecond)}, nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Time{}, fmt.Errorf("%w: timestamp %q is not YYYY-MM-DDThh:mm:ss[.fff]Z", ErrInvalid, s)
	}
	return Time{v.UTC().Truncate(time.Millisecond)}, nil
}

// hasOffset reports whether s ends in a numeric zone offset (+hh:mm or
// -hh:mm after the time part).
func hasOffset(s string) bool {
	i := strings.IndexByte(s, 'T')
	if i < 0 {
		return false
	}
	return strings.ContainsAny(s[i:], "+-")
}

package production

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// jsonType returns the reflect.Type used in the json.UnmarshalTypeErrors of
// this package's lenient types; typeMessage turns it into a form message.
func jsonType[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Optional is a request field that distinguishes "not sent" (Set false),
// "sent as null" (Set and Null) and a value. Fields such as webhook,
// service, image and speech_recognition need all three: null or "" clears
// them, absence keeps them.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Some returns an Optional holding v.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// Null returns an Optional that was sent as null.
func Null[T any]() Optional[T] { return Optional[T]{Set: true, Null: true} }

// IsZero reports whether the field was not sent (for the omitzero tag).
func (o Optional[T]) IsZero() bool { return !o.Set }

// MarshalJSON implements json.Marshaler.
func (o Optional[T]) MarshalJSON() ([]byte, error) {
	if !o.Set || o.Null {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}

// UnmarshalJSON implements json.Unmarshaler.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(b, []byte("null")) {
		o.Null = true
		var zero T
		o.Value = zero
		return nil
	}
	o.Null = false
	return json.Unmarshal(b, &o.Value)
}

// IntString is a whole number a client may send as a JSON integer or as a
// numeric string (metadata track and year); it is kept and returned as the
// string of its digits. "" clears it.
type IntString string

var intStringType = jsonType[IntString]()

// UnmarshalJSON implements json.Unmarshaler.
func (s *IntString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*s = ""
		return nil
	}
	v, ok := wholeNumber(b)
	if !ok {
		return &json.UnmarshalTypeError{Value: string(b), Type: intStringType}
	}
	*s = IntString(v)
	return nil
}

// wholeNumber accepts a non-negative JSON integer (1e3 and 12.0 included) or
// a string of digits, and returns its canonical digits; "" and "  " are
// accepted as "".
func wholeNumber(b []byte) (string, bool) {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		str = strings.TrimSpace(str)
		if str == "" {
			return "", true
		}
		for _, r := range str {
			if r < '0' || r > '9' {
				return "", false
			}
		}
		str = strings.TrimLeft(str, "0")
		if str == "" {
			str = "0"
		}
		return str, true
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f < 0 || f != math.Trunc(f) || f > 1e15 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// FlexInt is an integer a client may send as a JSON number or a numeric
// string (output_files bitrate). An empty string is 0.
type FlexInt int

var flexIntType = jsonType[FlexInt]()

// UnmarshalJSON implements json.Unmarshaler.
func (n *FlexInt) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*n = 0
		return nil
	}
	v, ok := wholeNumber(b)
	if !ok || len(v) > 9 {
		return &json.UnmarshalTypeError{Value: string(b), Type: flexIntType}
	}
	if v == "" {
		*n = 0
		return nil
	}
	i, _ := strconv.Atoi(v)
	*n = FlexInt(i)
	return nil
}

// Units of a Level.
const (
	UnitLU   = "LU"
	UnitDB   = "dB"
	UnitLUFS = "LUFS"
	UnitDBTP = "dBTP"
)

// Level is one statistics value with its unit. It marshals as the API's
// two-element array [number, unit]; a value that is not finite (the
// loudness of silence is -Inf) marshals as null.
type Level struct {
	Value float64
	Unit  string
}

// MarshalJSON implements json.Marshaler.
func (l Level) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '[')
	if math.IsInf(l.Value, 0) || math.IsNaN(l.Value) {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendFloat(b, l.Value, 'f', -1, 64)
	}
	b = append(b, ',')
	u, err := json.Marshal(l.Unit)
	if err != nil {
		return nil, err
	}
	b = append(b, u...)
	return append(b, ']'), nil
}

var levelType = jsonType[Level]()

// UnmarshalJSON reads [number|null, unit]; null becomes -Inf, the only
// non-finite value statistics produce.
func (l *Level) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil || len(pair) != 2 {
		return &json.UnmarshalTypeError{Value: string(b), Type: levelType}
	}
	var unit string
	if err := json.Unmarshal(pair[1], &unit); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: levelType}
	}
	v := math.Inf(-1)
	if !bytes.Equal(bytes.TrimSpace(pair[0]), []byte("null")) {
		if err := json.Unmarshal(pair[0], &v); err != nil {
			return &json.UnmarshalTypeError{Value: string(b), Type: levelType}
		}
	}
	*l = Level{Value: v, Unit: unit}
	return nil
}

// typeMessage is the form message for a value of the wrong JSON type.
func typeMessage(t reflect.Type) string {
	switch t {
	case intStringType:
		return "must be a whole number (integer or string of digits)"
	case flexIntType:
		return "must be an integer or a numeric string"
	case timeType:
		return "must be a timestamp string YYYY-MM-DDThh:mm:ss[.fff]Z"
	case levelType:
		return "must be a [number, unit] pair"
	case tagsType:
		return "must be an array of strings or a comma-separated string"
	case coordinateType:
		return "must be a decimal number or a string holding one"
	case chapterStartType:
		return "must be a time string HH:MM:SS[.mmm] or a number of seconds"
	}
	if t == nil {
		return "has the wrong type"
	}
	switch t.Kind() {
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "must be an integer"
	case reflect.Float32, reflect.Float64:
		return "must be a number"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Map, reflect.Struct:
		return "must be an object"
	}
	return "has the wrong type"
}

// LUFS, LU, DB and DBTP make Levels of measurements, rounded to 0.01 as the
// statistics report them.
func LUFS(v float64) Level { return Level{Value: round2(v), Unit: UnitLUFS} }

// LU makes a loudness-range or loudness-difference Level.
func LU(v float64) Level { return Level{Value: round2(v), Unit: UnitLU} }

// DB makes a level or gain Level in dB.
func DB(v float64) Level { return Level{Value: round2(v), Unit: UnitDB} }

// DBTP makes a true-peak Level.
func DBTP(v float64) Level { return Level{Value: round2(v), Unit: UnitDBTP} }

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*100) / 100
}

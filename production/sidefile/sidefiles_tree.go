package sidefile

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/audiopost/audiopost/production"
)

// The descr and stats side files come in JSON, XML and YAML. All three are
// rendered from the JSON the API returns, so they can never disagree: the
// JSON is read into an ordered tree (object keys keep their order, which
// encoding/json's maps would lose) and the tree is written as YAML or XML
// by the small emitters below. No YAML library is needed for writing.

// node is a JSON value: exactly one of obj, arr or scalar is meaningful.
type node struct {
	kind   byte // '{', '[', or 's' (scalar)
	keys   []string
	vals   []*node
	scalar any // string, json.Number, bool or nil
}

// parseTree reads one JSON value into a tree.
func parseTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data after JSON value", production.ErrInvalid)
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		n := &node{kind: '{'}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k)
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &node{kind: '['}
		for dec.More() {
			v, err := readNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return &node{kind: 's', scalar: t}, nil
}

// JSONToYAML converts a JSON document to YAML 1.2 block style, keeping the
// order of object keys. Strings are quoted whenever a plain scalar could
// be read as something else.
func JSONToYAML(data []byte) ([]byte, error) {
	n, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	switch {
	case n.kind == '{' && len(n.keys) > 0, n.kind == '[' && len(n.vals) > 0:
		writeYAMLBlock(&b, n, 0)
	default:
		b.WriteString(yamlInline(n))
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// yamlInline writes scalars and empty collections.
func yamlInline(n *node) string {
	switch n.kind {
	case '{':
		return "{}"
	case '[':
		return "[]"
	}
	switch v := n.scalar.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case string:
		return yamlString(v)
	}
	return "null"
}

func isBlock(n *node) bool {
	return (n.kind == '{' && len(n.keys) > 0) || (n.kind == '[' && len(n.vals) > 0)
}

func writeYAMLBlock(b *bytes.Buffer, n *node, indent int) {
	pad := strings.Repeat("  ", indent)
	if n.kind == '{' {
		for i, k := range n.keys {
			v := n.vals[i]
			b.WriteString(pad)
			b.WriteString(yamlString(k))
			b.WriteByte(':')
			if isBlock(v) {
				b.WriteByte('\n')
				writeYAMLBlock(b, v, indent+1)
			} else {
				b.WriteByte(' ')
				b.WriteString(yamlInline(v))
				b.WriteByte('\n')
			}
		}
		return
	}
	for _, v := range n.vals {
		b.WriteString(pad)
		b.WriteString("-")
		if isBlock(v) {
			b.WriteByte('\n')
			writeYAMLBlock(b, v, indent+1)
		} else {
			b.WriteByte(' ')
			b.WriteString(yamlInline(v))
			b.WriteByte('\n')
		}
	}
}

// yamlString writes s plain when that is unambiguous, else double-quoted
// with JSON escapes (a JSON string is a valid YAML double-quoted scalar).
func yamlString(s string) string {
	if yamlPlainOK(s) {
		return s
	}
	q, _ := json.Marshal(s)
	return string(q)
}

func yamlPlainOK(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	switch strings.ToLower(s) {
	case "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", "-.inf", ".nan":
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`0123456789.+") {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\ufeff' || !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// JSONToXML converts a JSON document to XML under a root element. Object
// keys become elements; array items become elements named after the
// array in the singular (a trailing "s" dropped, else "item"); null is an
// empty element with nil="true"; values are text.
func JSONToXML(data []byte, root string) ([]byte, error) {
	n, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	writeXML(&b, root, n, 0)
	return b.Bytes(), nil
}

func writeXML(b *bytes.Buffer, name string, n *node, indent int) {
	name = xmlName(name)
	pad := strings.Repeat("  ", indent)
	b.WriteString(pad)
	b.WriteString("<" + name)
	switch n.kind {
	case '{', '[':
		if len(n.vals) == 0 {
			b.WriteString("/>\n")
			return
		}
		b.WriteString(">\n")
		if n.kind == '{' {
			for i, k := range n.keys {
				writeXML(b, k, n.vals[i], indent+1)
			}
		} else {
			item := singular(name)
			for _, v := range n.vals {
				writeXML(b, item, v, indent+1)
			}
		}
		b.WriteString(pad + "</" + name + ">\n")
		return
	}
	if n.scalar == nil {
		b.WriteString(` nil="true"/>` + "\n")
		return
	}
	b.WriteByte('>')
	var text string
	switch v := n.scalar.(type) {
	case bool:
		text = strconv.FormatBool(v)
	case json.Number:
		text = v.String()
	case string:
		text = v
	}
	xml.EscapeText(b, []byte(text))
	b.WriteString("</" + name + ">\n")
}

func singular(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "s") && !strings.HasSuffix(name, "ss") {
		return name[:len(name)-1]
	}
	return "item"
}

// xmlName makes a JSON key a valid XML element name.
func xmlName(k string) string {
	var b strings.Builder
	for i, r := range k {
		switch {
		case r == '_' || unicode.IsLetter(r):
			b.WriteRune(r)
		case r == '-' || r == '.' || unicode.IsDigit(r):
			if i == 0 {
				b.WriteByte('_') // names cannot start with these
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || strings.HasPrefix(strings.ToLower(s), "xml") {
		s = "_" + s
	}
	return s
}

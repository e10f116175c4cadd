package httpapi_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A small JSON Schema (2020-12, as OpenAPI 3.1 uses it) validator for the
// keywords openapi.json uses. Keywords it does not know are errors, so a
// constraint can never be skipped silently; annotations are ignored.

// schemaDoc resolves local references of a decoded OpenAPI document.
// closed makes the named object schemas (reached through a $ref, with
// properties but no additionalProperties) reject undeclared properties:
// the document leaves response objects open for clients, but the tests
// check that it declares every field the server sends.
type schemaDoc struct {
	root   map[string]any
	closed bool
}

var annotationKeywords = []string{"description", "title", "default", "format", "contentMediaType", "examples", "deprecated", "readOnly", "writeOnly"}

// resolve follows a "#/a/b" reference.
func (d schemaDoc) resolve(ref string) (any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("non-local $ref %q", ref)
	}
	var cur any = d.root
	for _, part := range strings.Split(path, "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not in an object", ref, part)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, part)
		}
	}
	return cur, nil
}

// validate returns the problems of value v against schema s, each with
// its JSON path.
func (d schemaDoc) validate(s any, v any, path string) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	switch s := s.(type) {
	case bool:
		if !s {
			add("no value is allowed here")
		}
		return errs
	case map[string]any:
		for k, kw := range s {
			if strings.HasPrefix(k, "x-") || slices.Contains(annotationKeywords, k) {
				continue
			}
			errs = append(errs, d.keyword(s, k, kw, v, path)...)
		}
		return errs
	}
	add("schema is %T, not an object or boolean", s)
	return errs
}

func (d schemaDoc) keyword(s map[string]any, k string, kw, v any, path string) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	switch k {
	case "$ref":
		target, err := d.resolve(kw.(string))
		if err != nil {
			add("%v", err)
			return errs
		}
		errs := d.validate(target, v, path)
		ts, _ := target.(map[string]any)
		m, isObj := v.(map[string]any)
		if _, open := ts["additionalProperties"]; d.closed && isObj && !open && ts["properties"] != nil {
			props := ts["properties"].(map[string]any)
			for name := range m {
				if _, ok := props[name]; !ok {
					errs = append(errs, path+": "+name+" is not declared in "+kw.(string))
				}
			}
		}
		return errs
	case "type":
		types := []any{kw}
		if l, ok := kw.([]any); ok {
			types = l
		}
		for _, t := range types {
			if hasType(v, t.(string)) {
				return nil
			}
		}
		add("%s is not of type %v", brief(v), kw)
	case "enum":
		if !slices.ContainsFunc(kw.([]any), func(e any) bool { return jsonEqual(e, v) }) {
			add("%s is not one of %s", brief(v), brief(kw))
		}
	case "const":
		if !jsonEqual(kw, v) {
			add("%s is not %s", brief(v), brief(kw))
		}
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for name, ps := range kw.(map[string]any) {
			if pv, ok := m[name]; ok {
				errs = append(errs, d.validate(ps, pv, path+"."+name)...)
			}
		}
	case "required":
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, name := range kw.([]any) {
			if _, ok := m[name.(string)]; !ok {
				add("%s is missing", name)
			}
		}
	case "additionalProperties":
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		props, _ := s["properties"].(map[string]any)
		for name, pv := range m {
			if _, declared := props[name]; !declared {
				errs = append(errs, d.validate(kw, pv, path+"."+name)...)
			}
		}
	case "propertyNames":
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for name := range m {
			errs = append(errs, d.validate(kw, name, path+"{"+name+"}")...)
		}
	case "maxProperties":
		if m, ok := v.(map[string]any); ok && len(m) > intOf(kw) {
			add("more than %d properties", intOf(kw))
		}
	case "items":
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		prefix, _ := s["prefixItems"].([]any)
		for i := len(prefix); i < len(l); i++ {
			errs = append(errs, d.validate(kw, l[i], path+"."+strconv.Itoa(i))...)
		}
	case "prefixItems":
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, ps := range kw.([]any) {
			if i < len(l) {
				errs = append(errs, d.validate(ps, l[i], path+"."+strconv.Itoa(i))...)
			}
		}
	case "minItems":
		if l, ok := v.([]any); ok && len(l) < intOf(kw) {
			add("fewer than %d items", intOf(kw))
		}
	case "maxItems":
		if l, ok := v.([]any); ok && len(l) > intOf(kw) {
			add("more than %d items", intOf(kw))
		}
	case "minimum", "maximum":
		n, ok := v.(json.Number)
		if !ok {
			return nil
		}
		x, _ := n.Float64()
		lim, _ := kw.(json.Number).Float64()
		if k == "minimum" && x < lim || k == "maximum" && x > lim {
			add("%s is beyond the %s %s", n, k, kw)
		}
	case "minLength":
		if str, ok := v.(string); ok && len([]rune(str)) < intOf(kw) {
			add("shorter than %d", intOf(kw))
		}
	case "pattern":
		if str, ok := v.(string); ok && !regexp.MustCompile(kw.(string)).MatchString(str) {
			add("%q does not match %s", str, kw)
		}
	case "allOf":
		for _, sub := range kw.([]any) {
			errs = append(errs, d.validate(sub, v, path)...)
		}
	case "anyOf", "oneOf":
		matched := 0
		var all []string
		for _, sub := range kw.([]any) {
			e := d.validate(sub, v, path)
			if len(e) == 0 {
				matched++
			}
			all = append(all, e...)
		}
		switch {
		case matched == 0:
			add("%s matches none of %s: %s", brief(v), k, strings.Join(all, "; "))
		case k == "oneOf" && matched > 1:
			add("%s matches %d of oneOf", brief(v), matched)
		}
	default:
		add("the validator does not know the keyword %q", k)
	}
	return errs
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(n.String())
		return ok && r.IsInt()
	}
	return false
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok || bok {
		if !aok || !bok {
			return false
		}
		x, ok1 := new(big.Rat).SetString(an.String())
		y, ok2 := new(big.Rat).SetString(bn.String())
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	switch a := a.(type) {
	case []any:
		bl, ok := b.([]any)
		return ok && slices.EqualFunc(a, bl, jsonEqual)
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, x := range a {
			if y, ok := bm[k]; !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	}
	return a == b
}

func intOf(v any) int {
	n, _ := v.(json.Number).Int64()
	return int(n)
}

// brief shortens a value for messages.
func brief(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

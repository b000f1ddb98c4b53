package profile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
)

// CheckJSON validates JSON Lines output against JSONSchema: every line
// must be valid under the schema, the first must be the run and the rest
// samples.  It implements the JSON Schema keywords the schema uses (type,
// properties, required, additionalProperties, items, minItems, enum,
// const, minimum, maximum, pattern, oneOf, $ref to #/$defs) and refuses a
// schema with any other keyword, so nothing is silently left unchecked.
func CheckJSON(r io.Reader) error {
	var schema map[string]any
	if err := json.Unmarshal(JSONSchema, &schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	v := &validator{root: schema}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if dec.More() {
			return fmt.Errorf("line %d: more than one JSON value", n)
		}
		if err := v.check(schema, doc, ""); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		typ, _ := doc.(map[string]any)["type"].(string)
		if (n == 1) != (typ == "run") {
			return fmt.Errorf("line %d: type %q (the first line is the run, every other a sample)", n, typ)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no lines")
	}
	return nil
}

type validator struct{ root map[string]any }

var schemaKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "properties": true, "required": true, "additionalProperties": true, "items": true,
	"minItems": true, "enum": true, "const": true, "minimum": true, "maximum": true, "pattern": true,
	"oneOf": true, "$ref": true,
}

func (v *validator) check(s map[string]any, doc any, at string) error {
	where := at
	if where == "" {
		where = "/"
	}
	var keys []string
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !schemaKeywords[k] {
			return fmt.Errorf("schema at %s: keyword %q is not implemented by this checker", where, k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := v.root["$defs"].(map[string]any)
		sub, ok := defs[name].(map[string]any)
		if !found || !ok {
			return fmt.Errorf("schema at %s: unresolvable $ref %q", where, ref)
		}
		if err := v.check(sub, doc, at); err != nil {
			return err
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		var errs []string
		matched := 0
		for _, alt := range one {
			if err := v.check(alt.(map[string]any), doc, at); err != nil {
				errs = append(errs, err.Error())
			} else {
				matched++
			}
		}
		if matched != 1 {
			return fmt.Errorf("%s: matches %d of the oneOf alternatives, not exactly 1 (%s)", where, matched, strings.Join(errs, "; "))
		}
	}
	if t, ok := s["type"].(string); ok {
		if !hasType(doc, t) {
			return fmt.Errorf("%s: %s is not of type %s", where, show(doc), t)
		}
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, doc) {
		return fmt.Errorf("%s: %s is not %s", where, show(doc), show(c))
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || jsonEqual(x, doc)
		}
		if !found {
			return fmt.Errorf("%s: %s is not one of %s", where, show(doc), show(e))
		}
	}
	if num, ok := doc.(json.Number); ok {
		f, _ := num.Float64()
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %s is below the minimum %v", where, num, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %s is above the maximum %v", where, num, m)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if str, ok := doc.(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("schema at %s: pattern %q: %v", where, p, err)
			}
			if !re.MatchString(str) {
				return fmt.Errorf("%s: %q does not match %s", where, str, p)
			}
		}
	}
	if arr, ok := doc.([]any); ok {
		if m, ok := s["minItems"].(float64); ok && float64(len(arr)) < m {
			return fmt.Errorf("%s: %d items, fewer than %v", where, len(arr), m)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := v.check(items, x, fmt.Sprintf("%s/%d", at, i)); err != nil {
					return err
				}
			}
		}
	}
	if obj, ok := doc.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					return fmt.Errorf("%s: required member %q is missing", where, r)
				}
			}
		}
		var names []string
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			sub, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := s["additionalProperties"].(bool); ok && !ap {
					return fmt.Errorf("%s: member %q is not in the schema", where, k)
				}
				continue
			}
			if err := v.check(sub, obj[k], at+"/"+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasType(doc any, t string) bool {
	switch t {
	case "object":
		_, ok := doc.(map[string]any)
		return ok
	case "array":
		_, ok := doc.([]any)
		return ok
	case "string":
		_, ok := doc.(string)
		return ok
	case "boolean":
		_, ok := doc.(bool)
		return ok
	case "null":
		return doc == nil
	case "number":
		_, ok := doc.(json.Number)
		return ok
	case "integer":
		n, ok := doc.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	}
	return false
}

// jsonEqual compares a schema value (numbers as float64) with a document
// value (numbers as json.Number).
func jsonEqual(schema, doc any) bool {
	if n, ok := doc.(json.Number); ok {
		f, err := n.Float64()
		sf, ok := schema.(float64)
		return err == nil && ok && f == sf
	}
	return fmt.Sprint(schema) == fmt.Sprint(doc) && hasSameKind(schema, doc)
}

func hasSameKind(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	case nil:
		return b == nil
	}
	return false
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

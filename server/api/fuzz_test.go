package api

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeLookup: request decoding never panics, and whatever it accepts
// stays within the limits; whatever it refuses is a request error (4xx).
func FuzzDecodeLookup(f *testing.F) {
	for _, s := range []string{
		`{"column": "user_id", "key": "u1"}`,
		`{"column": "user_id", "keys": ["u1", 2, true], "limit": 10, "cursor": "b1.eyJpIjowfQ"}`,
		`{"column": "ts", "low": "2024-06-01T00:00:00Z", "high": null, "columns": ["ts"], "where": [{"column": "user_id", "op": ">", "value": 3}]}`,
		`{"key": {"nested": [1]}}`,
		`[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	lim := Limits{MaxKeys: 100, MaxRows: 50}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeLookup(bytes.NewReader(body), lim)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.Status < 400 || re.Status >= 500 {
				t.Fatalf("refusal %v is not a request error", err)
			}
			return
		}
		if len(req.Keys) > lim.MaxKeys || req.Limit < 1 || req.Limit > lim.MaxRows {
			t.Fatalf("accepted beyond the limits: %d keys, limit %d", len(req.Keys), req.Limit)
		}
		if _, err := DecodeLocate(bytes.NewReader(body), lim); err != nil {
			var re *Error
			if !errors.As(err, &re) {
				t.Fatalf("locate refusal %v is not a request error", err)
			}
		}
	})
}

func FuzzDecodeJoin(f *testing.F) {
	for _, s := range []string{
		`{"keys": {"user_id": ["u1", 2, null]}, "on": ["user_id"], "how": "left"}`,
		`{"keys": {"a": [1, 2], "b": ["x"]}}`,
		`{"keys": {"a": [[1]]}, "limit": -1}`,
		`{"keys": {}, "select": ["a"]}`,
		`[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	lim := Limits{MaxKeys: 100, MaxRows: 50, MaxJoinKeys: 20}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeJoin(bytes.NewReader(body), lim)
		if err != nil {
			var re *Error
			if !errors.As(err, &re) || re.Status < 400 || re.Status >= 500 {
				t.Fatalf("refusal %v is not a request error", err)
			}
			return
		}
		n := -1
		for _, vs := range req.Keys {
			if n >= 0 && len(vs) != n {
				t.Fatalf("accepted a ragged key set: %v", req.Keys)
			}
			n = len(vs)
		}
		if len(req.Keys) == 0 || n > lim.MaxJoinKeys || req.Limit < 0 {
			t.Fatalf("accepted beyond the limits: %d key rows, limit %d", n, req.Limit)
		}
	})
}

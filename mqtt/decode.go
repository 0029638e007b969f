package mqtt

import (
	"fmt"
	"unicode/utf8"

	"github.com/towerd/towerd/rules"
)

// decodeRequest reads one payload from <prefix>/roll: a validated request,
// or a bad_request error with the request's id when one can be read. It
// never panics, whatever the bytes (a panic in the rules decoder becomes a
// bad_request as well), so no input can bring the daemon down.
func decodeRequest(p []byte) (req *rules.Request, id string, rerr *rules.Error) {
	if len(p) > MaxPayload {
		return nil, rules.PeekID(p), badRequest("", "request is %d bytes; the limit is %d", len(p), MaxPayload)
	}
	if !utf8.Valid(p) {
		return nil, rules.PeekID(p), badRequest("", "request is not UTF-8 text")
	}
	req, err := parseRequest(p)
	if err != nil {
		e, ok := err.(*rules.Error)
		if !ok {
			e = badRequest("", "%v", err)
		}
		if e.Code == "" {
			e.Code = rules.CodeBadRequest
		}
		return nil, rules.PeekID(p), e
	}
	return req, req.ID, nil
}

// parseRequest is rules.ParseRequest behind a recover.
func parseRequest(p []byte) (req *rules.Request, err error) {
	defer func() {
		if r := recover(); r != nil {
			req, err = nil, badRequest("", "request could not be decoded (internal error: %v)", r)
		}
	}()
	req, err = rules.ParseRequest(p)
	if err == nil && req == nil {
		err = badRequest("", "request could not be decoded")
	}
	return req, err
}

func badRequest(field, format string, a ...any) *rules.Error {
	return &rules.Error{Code: rules.CodeBadRequest, Field: field, Message: fmt.Sprintf(format, a...)}
}

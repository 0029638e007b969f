package rules

// Temporary until the systems land.

func ParseRequest(data []byte) (*Request, error) {
	return nil, &Error{Code: CodeBadRequest, Message: "not implemented yet"}
}

func (r *Request) hasTarget() bool { return false }

// ResolveFree resolves a free roll from whatever dice landed.
func (r *Request) ResolveFree(dice []DieFace) (Outcome, error) {
	return Outcome{}, &Error{Code: CodeBadRequest, Message: "not implemented yet"}
}

// Package matcheck fails a test binary built with -tags matprofile when a
// gocv Mat is left open after its tests (without the tag it is empty).
package matcheck

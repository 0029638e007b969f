package numeral

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// The model file is gzip-compressed JSON (readable with zcat): a format
// name and version, the architecture, the classes, calibration, training
// statistics and the weights as base64 little-endian float32.
const (
	fileFormat = "towerd-numeral"
	// fileVersion is what Save writes for a square net without
	// normalisation, which version 1 readers understand; a polar or
	// normalised net is version 2, so an older towerd says to re-enrol
	// instead of failing on the parameter count. A model with a Lens is
	// version 3: a reader that ignored the lens would read the wrong face.
	fileVersion = 1
	// lensVersion is the version a model with a lens needs.
	lensVersion = 3
	// maxFile bounds the decompressed size a model file may claim, so that
	// a hostile file cannot exhaust memory.
	maxFile = 128 << 20
)

type fileModel struct {
	Format      string  `json:"format"`
	Version     int     `json:"version"`
	Arch        Arch    `json:"arch"`
	View        float64 `json:"view"`
	Temperature float64 `json:"temperature"`
	Classes     []class `json:"classes"`
	Stats       Stats   `json:"stats"`
	Params      []byte  `json:"params"`
	// Scene is what enrolment learnt of the camera's view (vision.Scene:
	// the empty tray and where dice lie), carried as it is; absent when
	// the photos did not share one view. Readers before it ignore it.
	Scene json.RawMessage `json:"scene,omitempty"`
	// Lens is where a slanted camera sees the up face; absent for a
	// camera looking straight down.
	Lens *Lens `json:"lens,omitempty"`
	// BoxFix moves the boxes of dice found without a learnt tray (see
	// Model.BoxFix); absent: none. A towerd before it reads without it:
	// more dice unread or wrong where the detector's boxes lie off the
	// labelled ones, as it always did.
	BoxFix []float64 `json:"box_fix,omitempty"`
	// Sizes is how large each kind of die lies in the camera's view, as
	// encoded by package vision (vision.ViewSizes), carried as it is;
	// absent when the photos did not share one view. A towerd before it
	// answers faces read through boxes that hold only part of a die.
	Sizes json.RawMessage `json:"sizes,omitempty"`
	// MinSharpness is the least sharpness a view of a die must have for
	// its face to be read (Model.minSharp); absent: no check. A towerd
	// before it reads blurred dice, answering guesses.
	MinSharpness float64 `json:"min_sharpness,omitempty"`
	// MinConfidence is the model's own threshold (Model.MinConfidence);
	// absent: none. A towerd before it answers at its configured
	// threshold the faces this model's held-back crops say it misreads.
	MinConfidence float64 `json:"min_confidence,omitempty"`
}

// fileVersion is the model file version an Arch needs.
func (a Arch) fileVersion() int {
	if a.Polar || a.Norm > 0 {
		return 2
	}
	return fileVersion
}

// Save writes the model to path, replacing it atomically.
func (m *Model) Save(path string) error {
	params := make([]byte, 4*len(m.params))
	for i, v := range m.params {
		binary.LittleEndian.PutUint32(params[4*i:], math.Float32bits(v))
	}
	f := fileModel{
		Format: fileFormat, Version: m.arch.fileVersion(), Arch: m.arch, View: m.view,
		Temperature: m.temp, Classes: m.classes, Stats: m.stats, Params: params, Scene: m.scene, BoxFix: m.boxFix, Sizes: m.sizes,
		MinSharpness: m.minSharp, MinConfidence: m.minConf,
	}
	if !m.lens.straight() {
		l := m.lens
		f.Lens, f.Version = &l, lensVersion
	}
	data, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("numeral: save %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("numeral: save %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	zw := gzip.NewWriter(tmp)
	_, err = zw.Write(data)
	err = errors.Join(err, zw.Close())
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("numeral: save %s: %w", path, err)
	}
	return nil
}

// Load reads a model written by Save.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("numeral: load model: %w", err)
	}
	m, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("numeral: load model %s: %w", path, err)
	}
	return m, nil
}

// decode checks and rebuilds a model from a file's bytes.
func decode(data []byte) (*Model, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a towerd numeral model (not gzip): %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("not a towerd numeral model (bad gzip): %w", err)
	}
	if len(raw) > maxFile {
		return nil, fmt.Errorf("model larger than %d bytes", maxFile)
	}
	var f fileModel
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not a towerd numeral model (bad JSON): %w", err)
	}
	if f.Format != fileFormat {
		return nil, fmt.Errorf("format %q, want %q", f.Format, fileFormat)
	}
	if f.Version < fileVersion || f.Version > lensVersion {
		return nil, fmt.Errorf("format version %d, this towerd reads versions 1 to %d (re-run towerd enroll)", f.Version, lensVersion)
	}
	var lens Lens
	if f.Lens != nil {
		lens = *f.Lens
		if f.Version < lensVersion {
			return nil, fmt.Errorf("format version %d cannot hold a lens (version %d; re-run towerd enroll)", f.Version, lensVersion)
		}
		if err := lens.check(); err != nil {
			return nil, err
		}
	}
	if v := f.Arch.fileVersion(); f.Version < v {
		return nil, fmt.Errorf("format version %d cannot hold a polar or normalised net (version %d; re-run towerd enroll)", f.Version, v)
	}
	if len(f.Classes) != f.Arch.Classes {
		return nil, fmt.Errorf("classes: %d listed, architecture has %d", len(f.Classes), f.Arch.Classes)
	}
	nt, err := newNet(f.Arch)
	if err != nil {
		return nil, err
	}
	if f.Classes[0] != (class{}) {
		return nil, fmt.Errorf("classes: first class is %+v, want background", f.Classes[0])
	}
	for i, c := range f.Classes[1:] {
		if c.Die == "" {
			return nil, fmt.Errorf("classes[%d]: no die", i+1)
		}
		if err := checkLabel(c.Die, c.Face); err != nil {
			return nil, fmt.Errorf("classes[%d]: %w", i+1, err)
		}
		if i > 0 && compareClass(f.Classes[i], c) >= 0 {
			return nil, fmt.Errorf("classes[%d]: %s %d out of order", i+1, c.Die, c.Face)
		}
	}
	if !(f.View >= 0.3 && f.View <= 1.6) {
		return nil, fmt.Errorf("view %g out of range 0.3..1.6", f.View)
	}
	if !(f.Temperature > 0.01 && f.Temperature < 100) {
		return nil, fmt.Errorf("temperature %g out of range", f.Temperature)
	}
	if !(f.MinSharpness >= 0 && f.MinSharpness < 100) {
		return nil, fmt.Errorf("min_sharpness %g out of range", f.MinSharpness)
	}
	if !(f.MinConfidence >= 0 && f.MinConfidence < 1) {
		return nil, fmt.Errorf("min_confidence %g out of range 0 to below 1", f.MinConfidence)
	}
	if len(f.Params) != 4*nt.nParams {
		return nil, fmt.Errorf("params: %d bytes, architecture needs %d", len(f.Params), 4*nt.nParams)
	}
	p := make([]float32, nt.nParams)
	for i := range p {
		v := math.Float32frombits(binary.LittleEndian.Uint32(f.Params[4*i:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("params[%d] is not a finite number", i)
		}
		p[i] = v
	}
	return &Model{
		arch: f.Arch, net: nt, params: p, classes: slices.Clip(f.Classes),
		view: f.View, lens: lens, temp: f.Temperature, stats: f.Stats, scene: f.Scene, boxFix: f.BoxFix, sizes: f.Sizes,
		minSharp: f.MinSharpness, minConf: f.MinConfidence,
	}, nil
}

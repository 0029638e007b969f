package outbox

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"time"
)

// The log is a run of frames, each [u32 body length][u32 CRC-32C of the
// body][body], little endian, in a file kept zero-filled ahead of the
// records: a zero length marks the end of the log. Writing into
// already-allocated zeros lets an fdatasync skip the file-system journal
// commit that an append growing the file needs, which on ext4 (the SD card
// of a Raspberry Pi, this CI machine) is most of the cost of a sync.

const (
	frameHeader = 8
	// maxBody bounds one record; requests are at most 16 KiB and results a
	// few KiB, so anything larger is damage, not data.
	maxBody = 1 << 20
)

// Record types.
const (
	recMeta   = 1 // next N and result sequence, first in a compacted segment
	recAccept = 2 // a request accepted under a key
	recOut    = 3 // a result or error to deliver (finishes its key)
	recAck    = 4 // the broker acknowledged an outbox entry
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type record struct {
	typ     byte
	n       uint64
	seq     uint64
	at      int64 // Unix nanoseconds
	kind    Kind
	key     string
	payload []byte
}

// appendFrame encodes r as one frame onto b.
func appendFrame(b []byte, r *record) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeader)...)
	b = append(b, r.typ)
	switch r.typ {
	case recMeta:
		b = binary.AppendUvarint(b, r.n)
		b = binary.AppendUvarint(b, r.seq)
	case recAccept:
		b = binary.AppendUvarint(b, r.n)
		b = binary.AppendVarint(b, r.at)
		b = appendBytes(b, []byte(r.key))
		b = appendBytes(b, r.payload)
	case recOut:
		b = binary.AppendUvarint(b, r.n)
		b = binary.AppendUvarint(b, r.seq)
		b = binary.AppendVarint(b, r.at)
		b = append(b, byte(r.kind))
		b = appendBytes(b, []byte(r.key))
		b = appendBytes(b, r.payload)
	case recAck:
		b = binary.AppendUvarint(b, r.n)
	}
	body := b[start+frameHeader:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(body, castagnoli))
	return b
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

var (
	errEnd  = errors.New("end of log")
	errTorn = errors.New("damaged frame")
)

// readFrame decodes the frame at the start of b. It returns errEnd at the
// zero-filled end of the log and errTorn for a frame that is cut short or
// fails its checksum or decoding (a write interrupted by a crash).
func readFrame(b []byte) (record, int, error) {
	if len(b) < frameHeader {
		if allZero(b) {
			return record{}, 0, errEnd
		}
		return record{}, 0, errTorn
	}
	n := binary.LittleEndian.Uint32(b)
	sum := binary.LittleEndian.Uint32(b[4:])
	if n == 0 {
		if sum == 0 {
			return record{}, 0, errEnd
		}
		return record{}, 0, errTorn
	}
	if n > maxBody || int(n) > len(b)-frameHeader {
		return record{}, 0, errTorn
	}
	body := b[frameHeader : frameHeader+int(n)]
	if crc32.Checksum(body, castagnoli) != sum {
		return record{}, 0, errTorn
	}
	r, ok := decodeBody(body)
	if !ok {
		return record{}, 0, errTorn
	}
	return r, frameHeader + int(n), nil
}

func decodeBody(body []byte) (record, bool) {
	d := decoder{b: body[1:]}
	r := record{typ: body[0]}
	switch r.typ {
	case recMeta:
		r.n = d.uvarint()
		r.seq = d.uvarint()
	case recAccept:
		r.n = d.uvarint()
		r.at = d.varint()
		r.key = string(d.bytes())
		r.payload = d.bytes()
	case recOut:
		r.n = d.uvarint()
		r.seq = d.uvarint()
		r.at = d.varint()
		r.kind = Kind(d.byte())
		r.key = string(d.bytes())
		r.payload = d.bytes()
		if r.kind != Result && r.kind != Error {
			return record{}, false
		}
	case recAck:
		r.n = d.uvarint()
	default:
		return record{}, false
	}
	if d.bad || len(d.b) != 0 {
		return record{}, false
	}
	return r, true
}

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return nil
	}
	p := make([]byte, n)
	copy(p, d.b)
	d.b = d.b[n:]
	return p
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func unixNano(t time.Time) int64 { return t.UnixNano() }

func fromUnixNano(n int64) time.Time { return time.Unix(0, n).UTC() }

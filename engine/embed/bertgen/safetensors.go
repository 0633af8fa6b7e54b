package bertgen

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
)

// WriteSafetensors writes fp32 tensors in the safetensors format: an 8-byte
// little-endian header length, a JSON header (name -> dtype, shape,
// data_offsets), then the raw little-endian data in header order.
func WriteSafetensors(path string, tensors []Tensor) error {
	sorted := append([]Tensor(nil), tensors...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range sorted {
		n := int64(4 * len(t.Data))
		header[t.Name] = map[string]any{"dtype": "F32", "shape": t.Shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("write safetensors: %w", err)
	}
	for len(hdr)%8 != 0 {
		hdr = append(hdr, ' ')
	}
	buf := make([]byte, 8+len(hdr)+int(off))
	binary.LittleEndian.PutUint64(buf, uint64(len(hdr)))
	copy(buf[8:], hdr)
	p := 8 + len(hdr)
	for _, t := range sorted {
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(buf[p:], math.Float32bits(v))
			p += 4
		}
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		return fmt.Errorf("write safetensors: %w", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sqrt(x float64) float64 { return math.Sqrt(x) }

package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// checkpoint is a Hugging Face BERT state dict as float32 tensors keyed by
// parameter name without the "bert." prefix (sentence-transformers checkpoints
// have none, BertFor* checkpoints do).
type checkpoint map[string][]float32

func (c checkpoint) put(name string, data []float32) {
	name = strings.TrimPrefix(name, "bert.")
	name = strings.ReplaceAll(name, ".gamma", ".weight") // TF-era LayerNorm names
	name = strings.ReplaceAll(name, ".beta", ".bias")
	c[name] = data
}

// readSafetensors reads F32, F16 and BF16 tensors; other dtypes (the int64
// position_ids buffer) are skipped.
func readSafetensors(path string) (checkpoint, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read safetensors: %w", err)
	}
	if len(raw) < 8 {
		return nil, fmt.Errorf("read safetensors %s: file too short", path)
	}
	n := binary.LittleEndian.Uint64(raw)
	if n > uint64(len(raw)-8) {
		return nil, fmt.Errorf("read safetensors %s: header length %d exceeds file size; the download may be truncated", path, n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("read safetensors %s header: %w", path, err)
	}
	data := raw[8+n:]
	ck := checkpoint{}
	for name, msg := range header {
		if name == "__metadata__" {
			continue
		}
		var info struct {
			DType   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(msg, &info); err != nil {
			return nil, fmt.Errorf("read safetensors %s: tensor %s: %w", path, name, err)
		}
		b, e := info.Offsets[0], info.Offsets[1]
		if b < 0 || e < b || e > int64(len(data)) {
			return nil, fmt.Errorf("read safetensors %s: tensor %s has offsets [%d,%d) outside the data", path, name, b, e)
		}
		buf := data[b:e]
		var out []float32
		switch info.DType {
		case "F32":
			out = make([]float32, len(buf)/4)
			for i := range out {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
		case "F16":
			out = make([]float32, len(buf)/2)
			for i := range out {
				out[i] = halfToFloat(binary.LittleEndian.Uint16(buf[2*i:]))
			}
		case "BF16":
			out = make([]float32, len(buf)/2)
			for i := range out {
				out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(buf[2*i:])) << 16)
			}
		default:
			continue
		}
		ck.put(name, out)
	}
	return ck, nil
}

// readPyTorch reads a torch.save'd state dict. Unlike cybertron's converter it
// accepts fp16 and bf16 storages (widened to fp32) instead of panicking.
func readPyTorch(path string) (ck checkpoint, err error) {
	defer func() {
		if r := recover(); r != nil { // gopickle panics on some malformed inputs
			err = fmt.Errorf("read pytorch checkpoint %s: %v", path, r)
		}
	}()
	res, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("read pytorch checkpoint %s: %w", path, err)
	}
	ck = checkpoint{}
	add := func(k, v any) error {
		name, _ := k.(string)
		t, ok := v.(*pytorch.Tensor)
		if !ok {
			return nil
		}
		data, err := tensorData(t)
		if err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		if data != nil {
			ck.put(name, data)
		}
		return nil
	}
	switch d := res.(type) {
	case *types.OrderedDict:
		for k, e := range d.Map {
			if err := add(k, e.Value); err != nil {
				return nil, fmt.Errorf("read pytorch checkpoint %s: %w", path, err)
			}
		}
	case *types.Dict:
		for _, e := range *d {
			if err := add(e.Key, e.Value); err != nil {
				return nil, fmt.Errorf("read pytorch checkpoint %s: %w", path, err)
			}
		}
	default:
		return nil, fmt.Errorf("read pytorch checkpoint %s: not a state dict (%T)", path, res)
	}
	return ck, nil
}

// tensorData returns a contiguous row-major copy of t, or nil for non-float tensors.
func tensorData(t *pytorch.Tensor) ([]float32, error) {
	var get func(i int) float32
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		get = func(i int) float32 { return s.Data[i] }
	case *pytorch.HalfStorage:
		get = func(i int) float32 { return s.Data[i] }
	case *pytorch.BFloat16Storage:
		get = func(i int) float32 { return s.Data[i] }
	case *pytorch.DoubleStorage:
		get = func(i int) float32 { return float32(s.Data[i]) }
	default:
		return nil, nil
	}
	switch len(t.Size) {
	case 1:
		out := make([]float32, t.Size[0])
		for i := range out {
			out[i] = get(t.StorageOffset + i*t.Stride[0])
		}
		return out, nil
	case 2:
		r, c := t.Size[0], t.Size[1]
		out := make([]float32, r*c)
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				out[i*c+j] = get(t.StorageOffset + i*t.Stride[0] + j*t.Stride[1])
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported rank %d", len(t.Size))
	}
}

// halfToFloat widens an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

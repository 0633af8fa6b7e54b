package bertgen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Files selects which weight files WriteDir produces.
type Files int

const (
	PyTorch     Files = 1 << iota // pytorch_model.bin
	Safetensors                   // model.safetensors
	AllFiles    = PyTorch | Safetensors
)

// WriteDir writes the model as a Hugging Face snapshot folder of
// sentence-transformers/all-MiniLM-L6-v2's shape.
func (m *Model) WriteDir(dir string, files Files) error {
	c := m.Config
	if err := os.MkdirAll(filepath.Join(dir, "1_Pooling"), 0o755); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	jsonFiles := map[string]any{
		"config.json": map[string]any{
			"_name_or_path":                "bertgen",
			"architectures":                []string{"BertModel"},
			"attention_probs_dropout_prob": 0.1,
			"gradient_checkpointing":       false,
			"hidden_act":                   "gelu",
			"hidden_dropout_prob":          0.1,
			"hidden_size":                  c.Hidden,
			"initializer_range":            0.02,
			"intermediate_size":            c.Intermediate,
			"layer_norm_eps":               1e-12,
			"max_position_embeddings":      c.MaxPositions,
			"model_type":                   "bert",
			"num_attention_heads":          c.Heads,
			"num_hidden_layers":            c.Layers,
			"pad_token_id":                 0,
			"position_embedding_type":      "absolute",
			"transformers_version":         "4.8.2",
			"type_vocab_size":              c.TypeVocab,
			"use_cache":                    true,
			"vocab_size":                   len(m.Vocab),
		},
		"tokenizer_config.json": map[string]any{
			"do_lower_case": true, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
			"cls_token": "[CLS]", "mask_token": "[MASK]", "tokenize_chinese_chars": true,
			"strip_accents": nil, "model_max_length": 512,
		},
		"sentence_bert_config.json": map[string]any{"max_seq_length": c.MaxSeqLength, "do_lower_case": false},
		"1_Pooling/config.json": map[string]any{
			"word_embedding_dimension": c.Hidden, "pooling_mode_cls_token": false,
			"pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": false,
			"pooling_mode_mean_sqrt_len_tokens": false,
		},
	}
	for name, v := range jsonFiles {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("write model: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(m.Vocab, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	if files&PyTorch != 0 {
		pos := make([]int64, c.MaxPositions)
		for i := range pos {
			pos[i] = int64(i)
		}
		extra := map[string][]int64{"embeddings.position_ids": pos}
		if err := WritePyTorch(filepath.Join(dir, "pytorch_model.bin"), m.Tensors, extra); err != nil {
			return err
		}
	}
	if files&Safetensors != 0 {
		if err := WriteSafetensors(filepath.Join(dir, "model.safetensors"), m.Tensors); err != nil {
			return err
		}
	}
	return nil
}

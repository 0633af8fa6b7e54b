// Package bertgen writes random BERT models in Hugging Face's on-disk layout, so
// the embedder, the converter and the model store can be tested without real
// weights or network access.
//
// A generated folder holds config.json, vocab.txt, tokenizer_config.json,
// sentence-transformers' 1_Pooling/config.json and sentence_bert_config.json,
// pytorch_model.bin (torch.save's zip+pickle, fp32) and model.safetensors.
// Everything is deterministic from the seed. [Model.Reference] is an
// independent float64 forward pass used as ground truth in tests.
package bertgen

// Package embed turns text into sentence vectors on the user's machine.
//
// It owns everything semantic search needs from a model: an HF-compatible BERT
// WordPiece tokenizer, a batched in-process BERT forward pass over weights loaded
// with github.com/nlpodyssey/cybertron, and the model store behind
// `recall models pull|import|list`. Loading a model never touches the network;
// only [Store.Pull] downloads, and only when the user asks for it.
package embed

package lsp

// resolved is the history and index one connection reads, as the
// forwarder resolved them (absolute paths).
type resolved struct {
	Source string `json:"source"`
	Index  string `json:"index"`
}

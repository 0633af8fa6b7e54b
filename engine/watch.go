package engine

// SourceFingerprint is a cheap summary of the history's files (inode, sizes
// and modification times, no query): a watcher polls it and syncs when it
// changes.
func (e *Engine) SourceFingerprint() string { return e.source().Fingerprint() }

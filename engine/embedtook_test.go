package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// `recall sync --embed` printed "embedded: … (… 0 ms)" however long the
// model ran: Embed set TookMS in a deferred func on a local copy after the
// return value had been taken. A run that spends at least minMS in its
// progress callback must report at least that, through Sync as the CLI
// reads it and through Embed.
func TestEmbedReportsItsDuration(t *testing.T) {
	const minMS = 20
	store := t.TempDir()
	installModel(t, store, 1, "")
	e := openSemantic(t, fixture(t, "v1"), filepath.Join(t.TempDir(), "i.db"), store)
	slow := func(EmbedProgress) { time.Sleep(minMS * time.Millisecond / 2) } // called at least twice
	res, err := e.Sync(context.Background(), SyncOptions{Force: true, Embed: true, EmbedProgress: slow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Embed == nil || res.Embed.Embedded == 0 {
		t.Fatalf("sync --embed embedded nothing: %+v", res.Embed)
	}
	if res.Embed.TookMS < minMS {
		t.Errorf("sync --embed: embedding took %d ms, want >= %d (the progress callback alone slept that long)", res.Embed.TookMS, minMS)
	}
	er, err := e.Embed(context.Background(), EmbedOptions{Progress: slow})
	if err != nil {
		t.Fatal(err)
	}
	if er.TookMS < minMS/2 {
		t.Errorf("embed with nothing left to do: took %d ms, want >= %d", er.TookMS, minMS/2)
	}
}

package engine

import (
	"encoding/json"
	"io"

	"github.com/recallhq/recall/engine/model"
)

func writeJSONL(w io.Writer, msgs []model.Message) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}

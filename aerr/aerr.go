// Package aerr defines the kinds of error that Ariadne reports, one sentinel
// per kind of the behaviour spec (§2.3), so that callers branch on kinds with
// errors.Is and read details with errors.As, never on message text.
//
// Every error that Ariadne creates for one of these kinds is an *Error whose
// Kind is the sentinel. An *Error matches its own kind, the kinds that kind
// specialises (both Unsupported… kinds are also ErrStorageMigration), and
// ErrAriadne, the base of every kind except ErrInvalidArgument (the JDK's
// IllegalArgumentException in the original, which is not an AriadneException).
package aerr

import (
	"errors"
	"fmt"
)

// Kind is the sentinel type of an error kind.
type Kind struct{ name string }

func (k *Kind) Error() string { return k.name }

func newKind(name string) *Kind { return &Kind{name: name} }

// The kinds of §2.3, plus ErrInvalidArgument.
var (
	ErrAriadne                         = newKind("ariadne error")
	ErrInvalidArgument                 = newKind("invalid argument")
	ErrColumnNotFound                  = newKind("column not found")
	ErrFileListNotFound                = newKind("file list not found")
	ErrFormatMismatch                  = newKind("format mismatch")
	ErrIndexLock                       = newKind("index lock")
	ErrIndexNotFound                   = newKind("index not found")
	ErrIndexNotFoundInNewSchema        = newKind("index not found in new schema")
	ErrMetadataMissingOrCorrupt        = newKind("metadata missing or corrupt")
	ErrMissingFormat                   = newKind("missing format")
	ErrMissingSchema                   = newKind("missing schema")
	ErrSchemaMismatch                  = newKind("schema mismatch")
	ErrSchemaNotProvided               = newKind("schema not provided")
	ErrSchemaParse                     = newKind("schema parse")
	ErrStorageMigration                = newKind("storage migration")
	ErrUnsupportedMetadataVersion      = newKind("unsupported metadata version")
	ErrUnsupportedStorageFormatVersion = newKind("unsupported storage format version")
	// ErrCorruptDataFile is not one of §2.3: a data file whose contents
	// contradict its own footer (row, value or null counts, statistics) is
	// refused as a whole rather than read as made-up values. Its word is
	// the one the command line already used for unreadable files.
	ErrCorruptDataFile = newKind("corrupt file")
	// ErrStorage is not one of §2.3 either: a request to the storage
	// failed on its way (network, server, I/O), so the object may be fine
	// and a retry may succeed. store.ErrStorage is this kind; it lives
	// here so that decoders (internal/pqrow) keep it without depending on
	// the store package.
	ErrStorage = newKind("storage")
)

// parents lists, for each kind, the kinds it specialises besides ErrAriadne.
var parents = map[*Kind][]*Kind{
	ErrUnsupportedMetadataVersion:      {ErrStorageMigration},
	ErrUnsupportedStorageFormatVersion: {ErrStorageMigration},
}

// Error is an error of one kind, with its message (the spec's wording where
// the spec gives one) and an optional cause.
type Error struct {
	Kind *Kind
	Msg  string
	Err  error // cause, may be nil
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is this error's kind, a kind it specialises, or
// ErrAriadne (for every kind but ErrInvalidArgument).
func (e *Error) Is(target error) bool {
	k, ok := target.(*Kind)
	if !ok {
		return false
	}
	if k == e.Kind {
		return true
	}
	if k == ErrAriadne {
		return e.Kind != ErrInvalidArgument
	}
	for _, p := range parents[e.Kind] {
		if p == k {
			return true
		}
	}
	return false
}

// New returns an error of kind k with a formatted message.
func New(k *Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of kind k with a message and a cause.
func Wrap(k *Kind, cause error, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// Invalid returns an ErrInvalidArgument error.
func Invalid(format string, args ...any) error { return New(ErrInvalidArgument, format, args...) }

// KindOf returns the kind of err, or nil when err carries none.
func KindOf(err error) *Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return nil
}

// The constructors below carry the exact messages of §2.3.

// ColumnNotFound reports a missing column; s is the caller's sentence, as in
// the original (see §9 item 24: we keep the wording of the message's frame).
func ColumnNotFound(s string) error {
	return New(ErrColumnNotFound, "Column %s was not found in the dataframe", s)
}

// FileListNotFound reports a missing FileList.
func FileListNotFound(name string) error {
	return New(ErrFileListNotFound, "FileList %s was not found", name)
}

// FormatMismatch reports a reconnect with another format.
func FormatMismatch(index, stored, given string) error {
	return New(ErrFormatMismatch, "Format mismatch for index '%s': stored format is '%s' but '%s' was provided", index, stored, given)
}

// IndexLockHeld reports a lock wait that timed out.
func IndexLockHeld(index, holderID, holderOwner string) error {
	return New(ErrIndexLock, "Could not acquire lock for index '%s'. Currently held by correlationId='%s', owner='%s'", index, holderID, holderOwner)
}

// IndexNotFound reports a missing index.
func IndexNotFound(name string) error { return New(ErrIndexNotFound, "Index %s was not found", name) }

// IndexNotFoundInNewSchema reports a schema evolution that drops an indexed column.
func IndexNotFoundInNewSchema(col string) error {
	return New(ErrIndexNotFoundInNewSchema, "Index %s was not found in new schema", col)
}

// MetadataMissingOrCorrupt reports unreadable metadata.json.
func MetadataMissingOrCorrupt(cause error) error {
	return Wrap(ErrMetadataMissingOrCorrupt, cause, "Index metadata is missing or corrupt. Delete and re-create the index.")
}

// CorruptDataFile reports a data file refused because its contents
// contradict its footer; cause says what lied (a *pqrow.IntegrityError).
// Nothing was indexed from the file and no index was changed.
func CorruptDataFile(uri string, cause error) error {
	return Wrap(ErrCorruptDataFile, cause, "Data file %s was refused, nothing of it was used", uri)
}

// MissingFormat reports a new index without a format.
func MissingFormat() error { return New(ErrMissingFormat, "Index doesn't have a specified fileformat") }

// MissingSchema reports metadata without a schema.
func MissingSchema() error { return New(ErrMissingSchema, "Schema missing from metadata") }

// SchemaMismatch reports a reconnect with another schema.
func SchemaMismatch(index string) error {
	return New(ErrSchemaMismatch, "Schema mismatch for index '%s': provided schema does not match stored schema. Use allowSchemaMismatch=true to update the stored schema.", index)
}

// SchemaNotProvided reports a new index without a schema.
func SchemaNotProvided() error {
	return New(ErrSchemaNotProvided, "No existing metadata found, schema must be provided")
}

// SchemaParse reports a stored schema that is not a struct.
func SchemaParse(cause error) error {
	return Wrap(ErrSchemaParse, cause, "Schema was found, but could not be parsed")
}

// UnsupportedMetadataVersion reports metadata newer than this build.
func UnsupportedMetadataVersion(found, supported int) error {
	return New(ErrUnsupportedMetadataVersion, "Index metadata version %d is newer than supported version %d. Upgrade Ariadne.", found, supported)
}

// UnsupportedStorageFormatVersion reports a storage format newer than this build.
func UnsupportedStorageFormatVersion(found, supported int) error {
	return New(ErrUnsupportedStorageFormatVersion, "Index storage format version %d is newer than supported version %d. Upgrade Ariadne.", found, supported)
}

package rules

import (
	"os"

	"github.com/headgate/headgate/internal/datafile"
)

type (
	dataReader = datafile.Reader
	dataError  = datafile.Error
)

// openData opens a table file for reading. A name that is not a regular
// file is refused before it is opened: opening a FIFO blocks until someone
// writes to it.
func openData(name string, limit int64) (*dataReader, error) {
	st, err := os.Stat(name)
	if err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, &dataError{File: name, Msg: "is not a regular file"}
	}
	return datafile.Open(name, datafile.Options{MaxBytes: limit})
}

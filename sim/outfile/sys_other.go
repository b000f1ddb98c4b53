//go:build !unix

package outfile

// writable is left to the write itself where access(2) is missing.
func writable(string) error { return nil }

// syncDir: directories cannot be synced here.
func syncDir(string) error { return nil }
